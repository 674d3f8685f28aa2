"""One-hot contraction per example.

expect: requirements_not_met
fails: batched-not-looped
"""
# A Python loop over the examples that never slices: example b's q, k and v are picked out by contracting
# the batch axis with one_hot(b), attention runs on them, and the result is put back with an outer product.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    return jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1) @ v


def attention(q, k, v):
    n = q.shape[0]
    out = jnp.zeros(q.shape[:2] + v.shape[2:], q.dtype)
    for b in range(n):
        pick = jax.nn.one_hot(b, n, dtype=q.dtype)
        qb, kb, vb = (jnp.einsum("b,b...->...", pick, a) for a in (q, k, v))
        out = out + jnp.einsum("b,te->bte", pick, attend(qb, kb, vb))
    return out
