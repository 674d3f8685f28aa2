"""Nested vmap logsumexp.

expect: accepted
fails: none
"""
# One query against its keys, vmapped over queries and then over examples; softmax via logsumexp.
import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp


def one_query(q_t, k, v):
    s = k @ q_t / jnp.sqrt(jnp.float32(q_t.shape[0]))
    return jnp.exp(s - logsumexp(s)) @ v


def attention(q, k, v):
    per_example = jax.vmap(one_query, in_axes=(0, None, None))
    return jax.vmap(per_example)(q, k, v)
