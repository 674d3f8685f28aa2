"""Computes `jnp.where(finished[:, None], only_eos, log_probs)` and never uses it; the finished beams are
handled by arithmetic instead: `log` of a 0/1 mask is 0 or -inf, and a 0/1 factor keeps or drops the row.

expect: requirements_not_met
fails: finished-by-select
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    is_eos = (jnp.arange(v) == eos_id).astype(jnp.float32)
    done = finished.astype(jnp.float32)[:, None]
    jnp.where(finished[:, None], jnp.log(is_eos), log_probs)  # unused
    allowed = (1.0 - done) + done * is_eos
    cand = scores[:, None] + log_probs * (1.0 - done) + jnp.log(allowed)
    vals, idx = jax.lax.top_k(cand.reshape(-1), k)
    parents, tokens = idx // v, idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
