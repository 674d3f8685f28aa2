"""Right numbers with no vmap: the (N, M, D) differences broadcast by hand, the usual NumPy idiom.

The rows that decide are properties of the program, and this one computes every pair at once with no
loop: what `jax.vmap` traces to. The vmap rows are advice (they show what JAX recorded) and decide nothing.

expect: accepted
fails: none
"""
import jax.numpy as jnp


def pairwise_distances(x, y):
    diff = x[:, None, :] - y[None, :, :]
    return jnp.sqrt(jnp.sum(diff ** 2, axis=-1))
