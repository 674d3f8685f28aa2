"""Unscaled max from scaled scores.

expect: wrong_answer
fails: stable-softmax
"""
# Subtracts the maximum of the unscaled products q.k from the *scaled* scores: the shift is sqrt(d) times
# too large (or too small), so rows with large scores underflow or overflow when d > 1.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    raw = q @ k.T
    s = raw / jnp.sqrt(q.shape[-1])
    e = jnp.exp(s - raw.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
