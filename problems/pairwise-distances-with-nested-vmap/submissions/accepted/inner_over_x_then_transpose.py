"""Accepted: the inner vmap walks the rows of x and the outer one the rows of y, giving (M, N); a transpose
afterwards only moves the result.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(((a - b) ** 2).sum())


def pairwise_distances(x, y):
    by_y = jax.vmap(jax.vmap(distance, in_axes=(0, None)), in_axes=(None, 0))(x, y)  # (M, N)
    return by_y.T
