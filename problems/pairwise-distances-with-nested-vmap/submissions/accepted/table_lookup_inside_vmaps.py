"""Cheat: the vmaps map over row *indices*, and the mapped function builds the whole distance table by
hand from the closed-over x and y, then looks up its own entry.

The rows that decide are properties of the program, and this one computes every pair at once with no
loop: what `jax.vmap` traces to. The vmap rows are advice (they show what JAX recorded) and decide nothing.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    def entry(i, j):
        table = jnp.sqrt(jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1))
        return table[i, j]

    return jax.vmap(jax.vmap(entry, (None, 0)), (0, None))(jnp.arange(x.shape[0]), jnp.arange(y.shape[0]))
