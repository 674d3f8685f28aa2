"""Right numbers and two vmaps, but the pairs are laid out by hand first: x and y are broadcast to
(N, M, D) and the vmaps only walk the two leading axes of those copies.

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
    shape = (x.shape[0], y.shape[0], x.shape[1])
    xs = jnp.broadcast_to(x[:, None, :], shape)
    ys = jnp.broadcast_to(y[None, :, :], shape)
    return jax.vmap(jax.vmap(distance))(xs, ys)
