"""Masked batch, once per example.

expect: requirements_not_met
fails: batched-not-looped
"""
# A Python loop runs the vmapped attention B times on the whole batch, each time with a NumPy one-hot mask
# that keeps one example, and adds up the masked outputs: every equation has the batch axis, but the batch
# is processed once per example.
import jax
import jax.numpy as jnp
import numpy as np


def attend(q, k, v):
    return jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1) @ v


def attention(q, k, v):
    n = q.shape[0]
    out = 0.0
    for b in range(n):
        mask = np.eye(n, dtype=np.float32)[b][:, None, None]
        out = out + mask * jax.vmap(attend)(q * mask, k, v)
    return out
