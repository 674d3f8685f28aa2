"""Rules out a finished beam's other tokens with a large finite constant, as t5x's decoding code does
(`NEG_INF = -1.0e7`), instead of -inf. Right whenever K finite candidates exist; when fewer do (a finished
beam beside dead ones), a ruled-out token is picked with a score near -1e7 instead of -inf.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp

NEG_INF = -1.0e7


def beam_search_step(scores, log_probs, finished, eos_id):
    num_beams, vocab = log_probs.shape
    eos_only = jnp.full((vocab,), NEG_INF).at[eos_id].set(0.0)
    candidates = scores[:, None] + jnp.where(finished[:, None], eos_only[None, :], log_probs)
    top_scores, flat = jax.lax.top_k(candidates.reshape(-1), num_beams)
    parents, tokens = jnp.divmod(flat, vocab)
    return {"scores": top_scores, "parents": parents, "tokens": tokens,
            "finished": finished[parents] | (tokens == eos_id)}
