"""Right numbers, but the two vmaps map the *squared* distance and the square root is taken afterwards, so
part of the distance runs outside them.

expect: requirements_not_met
fails: nested-vmap
"""
import jax
import jax.numpy as jnp


def squared_distance(a, b):
    return jnp.sum((a - b) ** 2)


def pairwise_distances(x, y):
    return jnp.sqrt(jax.vmap(jax.vmap(squared_distance, (None, 0)), (0, None))(x, y))
