"""Unscaled max then scaled.

expect: accepted
fails: none
"""
# The maximum is taken of the unscaled products q.k, subtracted from them, and the difference is scaled by
# 1/sqrt(d) afterwards: (r - max r) / sqrt(d) = s - max s, since a positive scale commutes with the maximum.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    raw = q @ k.T
    shifted = (raw - raw.max(axis=-1, keepdims=True)) / jnp.sqrt(jnp.float32(q.shape[-1]))
    e = jnp.exp(shifted)
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
