"""Right numbers from a full stable `jnp.argsort` of the K*V candidates, with no top_k at all. The finished
beams are masked with `jnp.where` before the sort, so finished-by-select holds: that row judges the masking,
and its flat indices are split with `// V` and `% V`, so flat-index-split holds (it judges the split,
whatever searched): the missing top_k is one-top-k's business alone, one mistake failing one row.

expect: requirements_not_met
fails: one-top-k
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    flat = (scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)).reshape(-1)
    order = jnp.argsort(-flat, stable=True)[:k]
    parents, tokens = order // v, order % v
    return {"scores": flat[order], "parents": parents, "tokens": tokens,
            "finished": finished[parents] | (tokens == eos_id)}
