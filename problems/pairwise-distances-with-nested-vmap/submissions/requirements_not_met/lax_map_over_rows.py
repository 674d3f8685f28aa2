"""Right numbers: `lax.map` walks the rows of x one at a time, and only the rows of y are vmapped.

expect: requirements_not_met
fails: no-loop
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2))


def pairwise_distances(x, y):
    return jax.lax.map(lambda a: jax.vmap(distance, in_axes=(None, 0))(a, y), x)
