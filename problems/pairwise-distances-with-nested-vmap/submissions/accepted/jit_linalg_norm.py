"""Accepted: a jitted entry point (the vmaps are inside the jit) and `jnp.linalg.norm` of the difference.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


@jax.jit
def pairwise_distances(x, y):
    def distance(a, b):
        return jnp.linalg.norm(a - b)

    return jax.vmap(lambda a: jax.vmap(lambda b: distance(a, b))(y))(x)
