import jax
import jax.numpy as jnp


def distance(a, b):
    """Euclidean distance between two vectors of length D."""
    return jnp.sqrt(jnp.sum((a - b) ** 2))


def pairwise_distances(x, y):
    over_y = jax.vmap(distance, in_axes=(None, 0))      # one row of x against every row of y: (M,)
    over_x_and_y = jax.vmap(over_y, in_axes=(0, None))  # every row of x: (N, M)
    return over_x_and_y(x, y)
