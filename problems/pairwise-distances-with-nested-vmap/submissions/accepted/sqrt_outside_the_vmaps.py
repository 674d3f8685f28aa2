"""Right numbers, but the two vmaps map the *squared* distance and the square root is taken afterwards, so
part of the distance runs outside them.

The rows that decide are properties of the program, and this one computes every pair at once with no
loop: what `jax.vmap` traces to. The vmap rows are advice (they show what JAX recorded) and decide nothing.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def squared_distance(a, b):
    return jnp.sum((a - b) ** 2)


def pairwise_distances(x, y):
    return jnp.sqrt(jax.vmap(jax.vmap(squared_distance, (None, 0)), (0, None))(x, y))
