"""Masks with -1e9 instead of -inf: a masked candidate becomes an ordinary, very bad one, so when fewer than
K candidates are real it is picked with a score near -1e9 (and in the wrong order) instead of -inf. On that
case the scores of size 1e9 hid the select from the probe's first perturbation (a move of about 1 is below
1e-5 of the largest entry, 1e4); its mirrored perturbation turns the -1e9 entries into large positive ones
that the top_k then picks, so the select is seen deciding the scores and every structural row holds: only the
numbers are wrong.

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
