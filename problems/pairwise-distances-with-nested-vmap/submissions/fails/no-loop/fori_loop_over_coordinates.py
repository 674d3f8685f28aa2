"""Right numbers and two nested vmaps, but the one-pair distance sums its D squares with `lax.fori_loop`,
which traces to a loop.

expect: requirements_not_met
fails: no-loop
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    total = jax.lax.fori_loop(0, a.shape[0], lambda k, s: s + (a[k] - b[k]) ** 2, jnp.float32(0.0))
    return jnp.sqrt(total)


def pairwise_distances(x, y):
    return jax.vmap(jax.vmap(distance, (None, 0)), (0, None))(x, y)
