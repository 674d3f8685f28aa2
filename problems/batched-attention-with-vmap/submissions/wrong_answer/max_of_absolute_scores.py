"""Max of absolute scores.

expect: wrong_answer
fails: stable-softmax
"""
# Subtracts the row maximum of |s| (never below the maximum of s, so nothing overflows), but a row whose
# scores are all very negative then underflows to 0 / 0 = nan (hidden cases have rows near -150).
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    e = jnp.exp(s - jnp.abs(s).max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
