"""Sigmoid ratio next to softmax times zero.

expect: requirements_not_met
fails: stable-softmax
"""
# jax.nn.softmax is computed and added with weight 0; the weights used are built without `exp`, from
# sigmoid(x) / sigmoid(-x) (which equals exp(x)): the scores reach the output around every checked
# exponential.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    x = s - s.max(axis=-1, keepdims=True)
    e = jax.nn.sigmoid(x) / jax.nn.sigmoid(-x)
    w = e / e.sum(axis=-1, keepdims=True) + 0.0 * jax.nn.softmax(s, axis=-1)
    return w @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
