"""The right `jnp.where` on `finished`, hidden behind `jnp.where(False, ...)`: the candidates actually come
from the arithmetic mask.

expect: requirements_not_met
fails: finished-by-select
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    is_eos = (jnp.arange(v) == eos_id).astype(jnp.float32)
    done = finished.astype(jnp.float32)[:, None]
    by_where = jnp.where(finished[:, None], jnp.log(is_eos), log_probs)
    by_arithmetic = log_probs * (1.0 - done) + jnp.log((1.0 - done) + done * is_eos)
    cand = scores[:, None] + jnp.where(False, by_where, by_arithmetic)
    vals, idx = jax.lax.top_k(cand.reshape(-1), k)
    parents, tokens = idx // v, idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
