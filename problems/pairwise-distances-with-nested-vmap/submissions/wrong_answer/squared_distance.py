"""Wrong answer: the squared distance, the square root forgotten.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    return jax.vmap(jax.vmap(lambda a, b: jnp.sum((a - b) ** 2), (None, 0)), (0, None))(x, y)
