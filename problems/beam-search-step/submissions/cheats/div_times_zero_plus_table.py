"""`i // V` times zero, added to the beam looked up in a table (`jnp.repeat(jnp.arange(K), V)[i]`).

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
    beam_of = jnp.repeat(jnp.arange(k, dtype=jnp.int32), v)
    parents = 0 * (idx // v) + beam_of[idx]
    tokens = idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
