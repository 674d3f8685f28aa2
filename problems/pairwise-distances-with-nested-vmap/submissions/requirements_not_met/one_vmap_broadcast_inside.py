"""Right numbers with one vmap over the rows of x; inside it, each row is broadcast against all of y by
hand.

expect: requirements_not_met
fails: nested-vmap, no-hand-broadcast
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    return jax.vmap(lambda a: jnp.sqrt(jnp.sum((a[None, :] - y) ** 2, axis=-1)))(x)
