"""Vmap times zero plus a Python loop.

expect: requirements_not_met
fails: batched-not-looped
"""
# The vmapped attention is multiplied by zero and added to the answer of a Python loop over the examples:
# the vmap is in the data flow of the output, but the loop computes it.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    return jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1) @ v


def attention(q, k, v):
    looped = jnp.stack([attend(q[b], k[b], v[b]) for b in range(q.shape[0])])
    return looped + 0.0 * jax.vmap(attend)(q, k, v)
