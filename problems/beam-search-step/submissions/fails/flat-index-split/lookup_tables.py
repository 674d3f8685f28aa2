"""Looks the beam and the token up in two tables indexed by the flat index (`jnp.repeat` and `jnp.tile` of
ramps) instead of computing them.

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
    parents = jnp.repeat(jnp.arange(k, dtype=jnp.int32), v)[idx]
    tokens = jnp.tile(jnp.arange(v, dtype=jnp.int32), k)[idx]
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
