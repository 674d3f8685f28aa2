"""A `jnp.where` on `finished` that selects between two arrays of zeros, added to candidates masked by
arithmetic: the select feeds the top_k but contributes nothing.

expect: requirements_not_met
fails: finished-by-select
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    is_eos = (jnp.arange(v) == eos_id).astype(jnp.float32)
    done = finished.astype(jnp.float32)[:, None]
    by_arithmetic = log_probs * (1.0 - done) + jnp.log((1.0 - done) + done * is_eos)
    zeros = jnp.where(finished[:, None], 0.0 * log_probs, 0.0 * log_probs)
    cand = scores[:, None] + by_arithmetic + zeros
    vals, idx = jax.lax.top_k(cand.reshape(-1), k)
    parents, tokens = idx // v, idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
