"""Python loop.

expect: requirements_not_met
fails: uses-reduce
"""
import jax.numpy as jnp


def row_sums(x):
    return jnp.stack([jnp.sum(x[i]) for i in range(x.shape[0])])
