"""Clip scores.

expect: requirements_not_met
fails: stable-softmax
"""
# Right numbers here, but it clips the scores to +-80 instead of shifting them: two scores above 80 in one
# row would get equal weights.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = jnp.clip(q @ k.T / jnp.sqrt(q.shape[-1]), -80.0, 80.0)
    e = jnp.exp(s)
    return e / e.sum(axis=-1, keepdims=True) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
