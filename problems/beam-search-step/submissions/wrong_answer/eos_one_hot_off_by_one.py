"""Builds the finished beams' one-hot row one token off (`arange(1, V + 1) == eos_id`): a finished beam is
extended by the token before eos, or, when eos is token 0, by nothing. Hidden case 7 (eos the last token, a
finished beam among the top candidates) catches it.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(1, v + 1) == eos_id, 0.0, -jnp.inf)
    step = jnp.where(finished[:, None], only_eos[None, :], log_probs)
    top, flat = jax.lax.top_k((scores[:, None] + step).reshape(-1), k)
    parents, tokens = flat // v, flat % v
    return {"scores": top, "parents": parents, "tokens": tokens,
            "finished": finished[parents] | (tokens == eos_id)}
