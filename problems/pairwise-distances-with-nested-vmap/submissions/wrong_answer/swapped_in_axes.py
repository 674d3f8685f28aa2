"""Wrong answer: the in_axes swapped, so the outer vmap walks y and the result is (M, N), the transpose.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2))


def pairwise_distances(x, y):
    return jax.vmap(jax.vmap(distance, (0, None)), (None, 0))(x, y)
