"""`jnp.einsum` with an implicit sum: one reduce over the whole matrix.

expect: accepted
fails: none
"""
import jax.numpy as jnp


def row_sums(x):
    return jnp.einsum("ij->i", x)
