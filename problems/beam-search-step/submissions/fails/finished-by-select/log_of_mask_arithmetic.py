"""Finished beams handled by arithmetic, not a selection: `log` of a 0/1 mask adds 0 or -inf, and a 0/1
factor drops a finished row's log-probabilities. Right numbers, no `jnp.where`.

expect: requirements_not_met
fails: finished-by-select
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    is_eos = (jnp.arange(v) == eos_id).astype(jnp.float32)
    done = finished.astype(jnp.float32)[:, None]
    cand = scores[:, None] + log_probs * (1.0 - done) + jnp.log((1.0 - done) + done * is_eos)
    vals, idx = jax.lax.top_k(cand.reshape(-1), k)
    parents, tokens = idx // v, idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
