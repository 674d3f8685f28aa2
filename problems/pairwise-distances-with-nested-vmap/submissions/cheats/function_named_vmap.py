"""Cheat: the outer map is a helper of the submission's own that is *named* `vmap` but loops over the rows
of x in Python and stacks the results; only the inner map is JAX's, so the program holds one copy of the
distance per row, each inside a single vmap.

expect: requirements_not_met
fails: all-pairs-at-once
"""
import jax
import jax.numpy as jnp


def vmap(f, in_axes):
    def mapped(*args):
        axis = in_axes.index(0)
        return jnp.stack([f(*[a[i] if ax == 0 else a for a, ax in zip(args, in_axes)])
                          for i in range(args[axis].shape[0])])
    return mapped


def distance(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2))


def pairwise_distances(x, y):
    return vmap(jax.vmap(distance, (None, 0)), (0, None))(x, y)
