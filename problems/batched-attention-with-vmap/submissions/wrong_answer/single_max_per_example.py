"""Single max per example.

expect: wrong_answer
fails: stable-softmax
"""
# Subtracts one maximum per example (over all queries and keys) instead of each row's: a row whose own
# maximum is far below the example's largest score underflows to 0 / 0 = nan (hidden cases have rows whose
# maxima differ by more than 100).
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    e = jnp.exp(s - s.max())
    return e / e.sum(axis=-1, keepdims=True) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
