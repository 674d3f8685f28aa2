"""Lax map.

expect: requirements_not_met
fails: batched-not-looped
"""
# Right numbers, but lax.map walks the examples one at a time in a loop.
import jax
import jax.numpy as jnp


def attend(args):
    q, k, v = args
    return jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1) @ v


def attention(q, k, v):
    return jax.lax.map(attend, (q, k, v))
