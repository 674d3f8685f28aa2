"""Literal softmax.

expect: wrong_answer
fails: stable-softmax
"""
# The softmax exactly as written, exp(s) / sum(exp(s)): Example 3's scores overflow to inf and give nan.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    e = jnp.exp(q @ k.T / jnp.sqrt(q.shape[-1]))
    return e / e.sum(axis=-1, keepdims=True) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
