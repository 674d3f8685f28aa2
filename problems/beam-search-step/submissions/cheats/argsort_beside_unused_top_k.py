"""Calls `lax.top_k` and throws its result away; the beams come from a full `jnp.argsort` of the candidates.
The argsort's flat indices are split with `// V` and `% V`, so flat-index-split (which judges the split,
whatever searched) holds; the search is one-top-k's to refuse, once.

expect: requirements_not_met
fails: one-top-k
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    flat = (scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)).reshape(-1)
    jax.lax.top_k(flat, k)  # unused
    order = jnp.argsort(-flat, stable=True)[:k]
    parents, tokens = order // v, order % v
    return {"scores": flat[order], "parents": parents, "tokens": tokens,
            "finished": finished[parents] | (tokens == eos_id)}
