"""Cheat: two nested vmaps of a function that computes nothing useful (zeros), added to the distances
computed by hand.

The rows that decide are properties of the program, and this one computes every pair at once with no
loop: what `jax.vmap` traces to. The vmap rows are advice (they show what JAX recorded) and decide nothing.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    zeros = jax.vmap(jax.vmap(lambda a, b: jnp.sum(a * b) * 0.0, (None, 0)), (0, None))(x, y)
    return zeros + jnp.linalg.norm(x[:, None, :] - y[None, :, :], axis=-1)
