"""A `lax.cond` per beam under `jax.vmap`: with a batched predicate vmap turns the cond into a select, so
the traced program holds a `select_n` on `finished` (no branch is taken in Python or at run time). Tokens
as `i - V * parent`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax import lax


def _row(score, row, done, eos_id):
    only_eos = jnp.where(jnp.arange(row.shape[0]) == eos_id, 0.0, -jnp.inf)
    return score + lax.cond(done, lambda: only_eos, lambda: row)


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    rows = jax.vmap(_row, in_axes=(0, 0, 0, None))(scores, log_probs, finished, eos_id)
    best, flat = lax.top_k(rows.reshape(-1), k)
    parents = flat // v
    tokens = flat - v * parents
    return {"scores": best, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
