"""Accepted: the gradient-safe square root real code uses (the double `jnp.where`, so that a later
`jax.grad` would see no nan at zero distance), written maxtext-style with explicit in_axes and out_axes.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def safe_norm(diff):
    squared = jnp.sum(diff * diff, axis=-1)
    positive = squared > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, squared, 1.0)), 0.0)


def pair_distance(a, b):
    return safe_norm(a - b)


def pairwise_distances(x, y):
    row = jax.vmap(pair_distance, in_axes=(None, 0), out_axes=0)
    return jax.vmap(row, in_axes=(0, None), out_axes=0)(x, y)
