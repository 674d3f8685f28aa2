"""Normalized over the queries.

expect: wrong_answer
fails: none
"""
# Subtracts each row's maximum over the keys (stable, as the requirement asks) but divides by the sum over
# the query axis: the wrong softmax axis is a wrong value, and both rows hold (the row maximum is subtracted
# before the one exponential; the batch is vmapped).
import jax
import jax.numpy as jnp


def _attend(q, k, v):
    s = q @ k.T / jnp.sqrt(jnp.float32(q.shape[-1]))
    w = jnp.exp(s - jnp.max(s, axis=-1, keepdims=True))
    w = w / jnp.sum(w, axis=0, keepdims=True)
    return w @ v


def attention(q, k, v):
    return jax.vmap(_attend)(q, k, v)
