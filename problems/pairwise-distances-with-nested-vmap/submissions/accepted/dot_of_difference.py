"""Accepted: the squared length as a dot product of the difference with itself, `diff @ diff`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    def distance(a, b):
        diff = a - b
        return jnp.sqrt(diff @ diff)

    return jax.vmap(jax.vmap(distance, (None, 0)), (0, None))(x, y)
