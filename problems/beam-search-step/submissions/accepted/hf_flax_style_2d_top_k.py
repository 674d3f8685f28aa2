"""HuggingFace-Flax-style generation code: a batch axis of one kept throughout, `lax.top_k` on the last axis
of a (1, K*V) array, `jnp.take_along_axis` to gather the parents' flags, and a `functools.partial` helper.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp
from jax import lax


def _flatten_beam_dim(x):
    return x.reshape((x.shape[0], x.shape[1] * x.shape[2]))


def _mask(log_probs, finished, eos_id):
    vocab = log_probs.shape[-1]
    return jnp.where(finished[..., None], jnp.where(jnp.arange(vocab) == eos_id, 0.0, -jnp.inf), log_probs)


def beam_search_step(scores, log_probs, finished, eos_id):
    num_beams, vocab = log_probs.shape
    batch_scores = (scores[:, None] + _mask(log_probs, finished, eos_id))[None]          # (1, K, V)
    topk = functools.partial(lax.top_k, k=num_beams)
    top_scores, top_indices = topk(_flatten_beam_dim(batch_scores))                     # (1, K)
    beam_indices = top_indices // vocab
    token_indices = top_indices % vocab
    parent_done = jnp.take_along_axis(finished[None], beam_indices, axis=1)
    return {"scores": top_scores[0], "parents": beam_indices[0], "tokens": token_indices[0],
            "finished": (parent_done | (token_indices == eos_id))[0]}
