"""Right numbers with no vmap: the (N, M, D) differences broadcast by hand, the usual NumPy idiom.

expect: requirements_not_met
fails: nested-vmap, no-hand-broadcast
"""
import jax.numpy as jnp


def pairwise_distances(x, y):
    diff = x[:, None, :] - y[None, :, :]
    return jnp.sqrt(jnp.sum(diff ** 2, axis=-1))
