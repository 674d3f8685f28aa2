"""T5X/flax-style beam step: named helpers, a large-negative constant spelled as -inf, `lax.top_k` over the
flattened (beam * vocab) scores and `//`, `%` on the flat indices, as `t5x/decoding.py` writes it.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax import lax

NEG_INF = -jnp.inf


def _mask_finished(log_probs, finished, eos_id):
    vocab = log_probs.shape[-1]
    eos_only = jnp.where(jnp.arange(vocab) == eos_id, 0.0, NEG_INF)
    return jnp.where(finished[:, jnp.newaxis], eos_only[jnp.newaxis, :], log_probs)


def beam_search_step(scores, log_probs, finished, eos_id):
    beam_size, vocab_size = log_probs.shape
    candidate_log_probs = scores[:, jnp.newaxis] + _mask_finished(log_probs, finished, eos_id)
    flat_log_probs = jnp.reshape(candidate_log_probs, (beam_size * vocab_size,))
    topk_log_probs, topk_indices = lax.top_k(flat_log_probs, k=beam_size)
    topk_beam_indices = topk_indices // vocab_size
    topk_ids = topk_indices % vocab_size
    newly_finished = topk_ids == eos_id
    return {"scores": topk_log_probs, "parents": topk_beam_indices, "tokens": topk_ids,
            "finished": jnp.take(finished, topk_beam_indices) | newly_finished}
