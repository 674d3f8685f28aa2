"""Clip scores.

expect: wrong_answer
fails: stable-softmax
"""
# Clips the scores to +-80 instead of shifting them: no overflow, but two scores above 80 in one row get
# equal weights (the hidden cases have such rows), so the numbers are wrong.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = jnp.clip(q @ k.T / jnp.sqrt(q.shape[-1]), -80.0, 80.0)
    e = jnp.exp(s)
    return e / e.sum(axis=-1, keepdims=True) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
