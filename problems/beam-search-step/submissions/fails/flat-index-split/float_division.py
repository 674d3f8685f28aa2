"""Splits the flat index with a float division and `floor`, then converts back: right for these sizes, but
not integer arithmetic (float32 holds integers exactly only up to 2**24).

expect: requirements_not_met
fails: flat-index-split
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    flat = (scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)).reshape(-1)
    vals, idx = jax.lax.top_k(flat, k)
    parents = jnp.floor(idx / v).astype(jnp.int32)
    tokens = (idx - parents * v).astype(jnp.int32)
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
