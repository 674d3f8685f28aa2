"""Right numbers, one vmap: a Python loop over the rows of x, each row vmapped over y and the rows stacked.
The loop unrolls into N copies of the distance, joined outside any second vmap.

expect: requirements_not_met
fails: all-pairs-at-once
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2))


def pairwise_distances(x, y):
    rows = [jax.vmap(distance, in_axes=(None, 0))(x[i], y) for i in range(x.shape[0])]
    return jnp.stack(rows)
