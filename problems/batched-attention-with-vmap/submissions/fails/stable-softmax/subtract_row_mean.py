"""Subtract row mean.

expect: requirements_not_met
fails: stable-softmax
"""
# Right numbers here, but it subtracts the row mean, not the max: a large enough spread still overflows.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    e = jnp.exp(s - s.mean(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
