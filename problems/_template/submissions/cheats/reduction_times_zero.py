"""The reduction is there, multiplied by zero, next to a Python loop that computes the answer.

expect: requirements_not_met
fails: uses-reduce
"""
import jax.numpy as jnp


def row_sums(x):
    by_hand = jnp.stack([sum(x[i, j] for j in range(x.shape[1])) for i in range(x.shape[0])])
    return by_hand + 0.0 * jnp.sum(x, axis=1)
