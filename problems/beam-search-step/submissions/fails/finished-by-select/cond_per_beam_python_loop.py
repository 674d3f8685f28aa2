"""A Python loop over the beams with one `lax.cond` on each beam's flag: right numbers, but a branch per beam
instead of one `jnp.where`.

expect: requirements_not_met
fails: finished-by-select
"""
import jax
import jax.numpy as jnp
from jax import lax


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    rows = [lax.cond(finished[b], lambda b=b: only_eos, lambda b=b: log_probs[b]) for b in range(k)]
    cand = scores[:, None] + jnp.stack(rows)
    vals, idx = jax.lax.top_k(cand.reshape(-1), k)
    parents, tokens = idx // v, idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
