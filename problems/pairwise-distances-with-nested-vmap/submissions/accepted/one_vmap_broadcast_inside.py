"""Right numbers with one vmap over the rows of x; inside it, each row is broadcast against all of y by
hand.

The rows that decide are properties of the program, and this one computes every pair at once with no
loop: what `jax.vmap` traces to. The vmap rows are advice (they show what JAX recorded) and decide nothing.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    return jax.vmap(lambda a: jnp.sqrt(jnp.sum((a[None, :] - y) ** 2, axis=-1)))(x)
