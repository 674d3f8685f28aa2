"""Row max minus one.

expect: requirements_not_met
fails: stable-softmax
"""
# Right numbers, but what is subtracted is the row maximum minus 1, so the largest exponent is 1, not 0:
# not the row maximum the requirement asks for (a larger constant would overflow).
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    e = jnp.exp(s - (s.max(axis=-1, keepdims=True) - 1.0))
    return e / e.sum(axis=-1, keepdims=True) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
