"""Vmap over halves.

expect: requirements_not_met
fails: batched-not-looped
"""
# Right numbers, but a Python loop over chunks of at most two examples calls jax.vmap once per chunk: the
# batch is still processed a piece at a time.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    return jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1) @ v


def attention(q, k, v):
    pieces = [jax.vmap(attend)(q[i:i + 2], k[i:i + 2], v[i:i + 2]) for i in range(0, q.shape[0], 2)]
    return jnp.concatenate(pieces)
