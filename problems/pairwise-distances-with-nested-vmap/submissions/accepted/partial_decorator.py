"""Accepted: the vmaps applied as decorators with functools.partial, the inner one over a closure.

expect: accepted
fails: none
"""
from functools import partial

import jax
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(jnp.sum(jnp.square(a - b)))


@partial(jax.vmap, in_axes=(0, None))
def distances_from(a, y):
    return jax.vmap(partial(distance, a))(y)


def pairwise_distances(x, y):
    return distances_from(x, y)
