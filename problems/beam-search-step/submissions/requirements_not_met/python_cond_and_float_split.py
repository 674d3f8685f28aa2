"""A `lax.cond` per beam in a Python loop and a float division to split the index: right numbers, two
requirements unmet.

expect: requirements_not_met
fails: flat-index-split, finished-by-select
"""
import jax
import jax.numpy as jnp
from jax import lax


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    rows = jnp.stack([lax.cond(finished[b], lambda b=b: only_eos, lambda b=b: log_probs[b]) for b in range(k)])
    vals, idx = jax.lax.top_k((scores[:, None] + rows).reshape(-1), k)
    parents = jnp.floor(idx / v).astype(jnp.int32)
    tokens = idx - parents * v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
