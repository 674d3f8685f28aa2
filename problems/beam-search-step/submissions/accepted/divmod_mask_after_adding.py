"""Adds the scores first and masks afterwards: a finished beam keeps its own score at eos and -inf elsewhere,
chosen with `jnp.where` on the sums; `divmod` splits the flat index.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    is_eos = jnp.arange(v)[None, :] == eos_id
    live = scores[:, None] + log_probs
    kept = jnp.where(is_eos, scores[:, None], -jnp.inf)
    candidates = jnp.where(finished[:, None], kept, live)
    best, flat = jax.lax.top_k(candidates.reshape(k * v), k)
    parents, tokens = jnp.divmod(flat, v)
    return {"scores": best, "parents": parents, "tokens": tokens,
            "finished": jnp.logical_or(finished[parents], tokens == eos_id)}
