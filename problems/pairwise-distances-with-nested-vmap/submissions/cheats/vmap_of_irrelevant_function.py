"""Cheat: two nested vmaps of a function that computes nothing useful (zeros), added to the distances
computed by hand.

expect: requirements_not_met
fails: nested-vmap, no-hand-broadcast
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    zeros = jax.vmap(jax.vmap(lambda a, b: jnp.sum(a * b) * 0.0, (None, 0)), (0, None))(x, y)
    return zeros + jnp.linalg.norm(x[:, None, :] - y[None, :, :], axis=-1)
