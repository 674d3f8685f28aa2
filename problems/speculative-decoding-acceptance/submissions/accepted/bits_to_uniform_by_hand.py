"""`jax.random.bits` and the float conversion `jax.random.uniform` does (23 mantissa bits into [1, 2), minus 1),
written out; a vmap of the one-position test; the leading run from a triangular matrix (position i counts
when every position up to i passed).

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax import lax


def _accept(u, p_row, q_row, x):
    return u < jnp.minimum(1.0, p_row[x] / q_row[x])


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    bits = jax.random.bits(key, (n,), dtype=jnp.uint32)
    u = lax.bitcast_convert_type((bits >> 9) | jnp.uint32(0x3F800000), jnp.float32) - 1.0
    accepted = jax.vmap(_accept)(u, target_probs[:n], draft_probs, draft_tokens)
    upto = jnp.tril(jnp.ones((n, n), bool))                       # row i: positions 0..i
    leading = jnp.all(jnp.where(upto, accepted[None, :], True), axis=1)
    a = jnp.sum(leading, dtype=jnp.int32)
    resid = jnp.maximum(target_probs[:n] - draft_probs, 0)
    some = jnp.any(resid > 0, axis=1, keepdims=True)  # no token with p > q: the target row itself
    resid = lax.select(jnp.broadcast_to(some, resid.shape), resid / jnp.sum(resid, axis=1, keepdims=True),
                       target_probs[:n])
    table = jnp.vstack([resid, target_probs[n][None]])
    return {"num_accepted": a, "next_probs": lax.dynamic_index_in_dim(table, a, keepdims=False)}
