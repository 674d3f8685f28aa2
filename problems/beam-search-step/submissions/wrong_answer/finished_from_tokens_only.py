"""New flags from the tokens alone (`tokens == eos_id`), forgetting the parent's flag: right while every
pick of a finished beam is its eos, wrong when fewer than K candidates are finite and a finished beam's
ruled-out token (-inf) is picked: its parent is finished, its token is not eos.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    flat = (scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)).reshape(-1)
    vals, idx = jax.lax.top_k(flat, k)
    parents, tokens = idx // v, idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": tokens == eos_id}
