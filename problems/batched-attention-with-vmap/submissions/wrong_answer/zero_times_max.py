"""Zero times max.

expect: wrong_answer
fails: stable-softmax
"""
# A row maximum flows into the exponent, but multiplied by zero (behind stop_gradient): the exponent is the
# raw score, which overflows for scores above about 88.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    e = jnp.exp(s - 0.0 * jax.lax.stop_gradient(s.max(axis=-1, keepdims=True)))
    return e / e.sum(axis=-1, keepdims=True) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
