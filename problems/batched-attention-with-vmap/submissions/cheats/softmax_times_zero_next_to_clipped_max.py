"""Softmax times zero next to a clipped maximum.

expect: requirements_not_met
fails: stable-softmax
"""
# jax.nn.softmax is computed and added with weight 0; the weights used come from exp(s - m) where m is the
# row maximum of the *clipped* scores (a different array), which happens to keep every exponent in range
# for scores within +-150 but is not the maximum of the scores being exponentiated.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    e = jnp.exp(s - jnp.clip(s, -80.0, 80.0).max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True) + 0.0 * jax.nn.softmax(s, axis=-1)
    return w @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
