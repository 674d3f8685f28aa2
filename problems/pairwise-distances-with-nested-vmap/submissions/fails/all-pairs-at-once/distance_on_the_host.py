"""The mapped function hands its two rows to NumPy through `jax.pure_callback`: under the two vmaps, with
`vmap_method="broadcast_all"`, the callback receives every pair of rows at once and computes the whole
matrix in Python. Right numbers and two nested vmaps, but JAX computes none of the distances.

expect: requirements_not_met
fails: all-pairs-at-once
"""
import jax
import jax.numpy as jnp
import numpy as np


def _numpy_distance(a, b):
    return np.sqrt(np.sum((a - b) ** 2, axis=-1)).astype(np.float32)


def distance(a, b):
    return jax.pure_callback(_numpy_distance, jax.ShapeDtypeStruct((), jnp.float32), a, b,
                             vmap_method="broadcast_all")


def pairwise_distances(x, y):
    return jax.vmap(jax.vmap(distance, in_axes=(None, 0)), in_axes=(0, None))(x, y)
