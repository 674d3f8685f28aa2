"""Right numbers and two nested vmaps, but the squares are accumulated with `lax.scan` over the coordinates.

expect: requirements_not_met
fails: no-loop
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    total, _ = jax.lax.scan(lambda s, ab: (s + (ab[0] - ab[1]) ** 2, None), jnp.float32(0.0), (a, b))
    return jnp.sqrt(total)


def pairwise_distances(x, y):
    return jax.vmap(jax.vmap(distance, (None, 0)), (0, None))(x, y)
