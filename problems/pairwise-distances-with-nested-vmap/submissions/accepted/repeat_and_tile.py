"""Right numbers and two vmaps, but every pair is spelled out by hand with `jnp.repeat` and `jnp.tile`
(N * M copies of the rows) before the vmaps walk them.

The rows that decide are properties of the program, and this one computes every pair at once with no
loop: what `jax.vmap` traces to. The vmap rows are advice (they show what JAX recorded) and decide nothing.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2))


def pairwise_distances(x, y):
    n, m, d = x.shape[0], y.shape[0], x.shape[1]
    xs = jnp.repeat(x, m, axis=0).reshape(n, m, d)
    ys = jnp.tile(y, (n, 1)).reshape(n, m, d)
    return jax.vmap(jax.vmap(distance))(xs, ys)
