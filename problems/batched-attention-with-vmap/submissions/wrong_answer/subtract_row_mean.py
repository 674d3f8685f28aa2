"""Subtract row mean.

expect: wrong_answer
fails: stable-softmax
"""
# Subtracts the row mean, not the max: a row whose scores spread over more than about 176 still overflows
# (the hidden cases have rows spanning -150..150), giving inf / inf = nan.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    e = jnp.exp(s - s.mean(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
