"""Cheat: the nested vmap is computed and thrown away; the distances are broadcast by hand.

expect: requirements_not_met
fails: nested-vmap, no-hand-broadcast
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2))


def pairwise_distances(x, y):
    jax.vmap(jax.vmap(distance, (None, 0)), (0, None))(x, y)
    return jnp.sqrt(jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1))
