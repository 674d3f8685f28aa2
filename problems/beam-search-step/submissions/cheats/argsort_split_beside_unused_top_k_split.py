"""The scores come from `lax.top_k`, whose flat indices are split with `// V` and `% V` and then thrown away;
`parents` and `tokens` come from a full `jnp.argsort` of the candidates, split the same way. The argsort is
a second search that picks the returned beams (one-top-k: the tokens top_k picks are not the ones returned);
the split is integer arithmetic on a search's flat indices, so flat-index-split holds.

expect: requirements_not_met
fails: one-top-k
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    flat = (scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)).reshape(-1)
    top_scores, index = jax.lax.top_k(flat, k)
    _parents, _tokens = index // v, index % v  # split, never used
    order = jnp.argsort(-flat, stable=True)[:k]
    parents, tokens = order // v, order % v
    return {"scores": top_scores, "parents": parents, "tokens": tokens,
            "finished": finished[parents] | (tokens == eos_id)}
