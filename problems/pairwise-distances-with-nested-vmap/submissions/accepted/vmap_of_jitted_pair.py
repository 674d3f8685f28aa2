"""Accepted: the one-pair function is jitted on its own and the two vmaps wrap the jit.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


@jax.jit
def distance(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2))


def pairwise_distances(x, y):
    return jax.vmap(jax.vmap(distance, in_axes=(None, 0)), in_axes=(0, None))(x, y)
