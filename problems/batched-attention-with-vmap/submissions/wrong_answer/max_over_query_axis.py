"""Max over the query axis.

expect: wrong_answer
fails: stable-softmax
"""
# Takes the maximum along the query axis (one per key) instead of along the key axis: each row then has a
# different number subtracted from each of its entries, which changes the softmax.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    e = jnp.exp(s - s.max(axis=0, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
