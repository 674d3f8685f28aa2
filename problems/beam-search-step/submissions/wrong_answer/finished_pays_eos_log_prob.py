"""Lets a finished beam extend only with eos, but charges it log_probs[k, eos] instead of nothing.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    is_eos = jnp.arange(v) == eos_id
    step = jnp.where(finished[:, None] & ~is_eos, -jnp.inf, log_probs)
    vals, idx = jax.lax.top_k((scores[:, None] + step).reshape(-1), k)
    parents, tokens = idx // v, idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
