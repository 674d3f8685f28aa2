"""Lax map over queries in vmap.

expect: accepted
fails: none
"""
# One example's queries are walked with lax.map (a scan over query positions), and jax.vmap maps that over
# the examples: a loop over queries is allowed, only loops over examples are not.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    def one_query(q_t):
        s = k @ q_t / jnp.sqrt(jnp.float32(q_t.shape[0]))
        s = s - jax.lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True))
        p = jnp.exp(s)
        return p @ v / jnp.sum(p)

    return jax.lax.map(one_query, q)


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
