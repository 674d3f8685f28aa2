"""Masks with -1e9 instead of -inf: a masked candidate becomes an ordinary, very bad one, so when fewer than
K candidates are real it is picked with a score near -1e9 (and in the wrong order) instead of -inf.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -1e9)
    safe_scores = jnp.maximum(scores, -1e9)
    flat = (safe_scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)).reshape(-1)
    vals, idx = jax.lax.top_k(flat, k)
    parents, tokens = idx // v, idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
