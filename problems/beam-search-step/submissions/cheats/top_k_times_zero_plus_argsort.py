"""top_k's values times zero, added to the values a full argsort picks; the indices come from the argsort
and are split with `// V` and `% V`, so flat-index-split holds and one-top-k alone refuses the search.

expect: requirements_not_met
fails: one-top-k
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    flat = (scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)).reshape(-1)
    vals, _ = jax.lax.top_k(flat, k)
    order = jnp.argsort(-flat, stable=True)[:k]
    parents, tokens = order // v, order % v
    return {"scores": flat[order] + 0.0 * jnp.nan_to_num(vals), "parents": parents, "tokens": tokens,
            "finished": finished[parents] | (tokens == eos_id)}
