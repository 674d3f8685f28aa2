"""Accepted, written the way a Flax module is: a small module object whose `__call__` handles one pair,
mapped twice with `jax.vmap` over its bound method (flax itself is not installed here).

expect: accepted
fails: none
"""
import dataclasses

import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class EuclideanDistance:
    """Distance between one query and one key vector."""

    def __call__(self, query, key):
        delta = query - key
        return jnp.sqrt(jnp.einsum("d,d->", delta, delta))


def pairwise_distances(x, y):
    module = EuclideanDistance()
    per_key = jax.vmap(module.__call__, in_axes=(None, 0))
    per_query = jax.vmap(per_key, in_axes=(0, None))
    return per_query(x, y)
