"""lax.map with batch_size=2 over the rows of x, a vmap over y inside: `lax.map(batch_size=...)` vmaps its
function over each batch, and that vmap counts as one of the two, but it is a loop (no-loop), and for an odd
N the leftover row is computed apart and joined by a `concatenate` outside the vmaps (nested-vmap).

expect: requirements_not_met
fails: all-pairs-at-once,no-loop
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2))


def pairwise_distances(x, y):
    row = jax.vmap(distance, in_axes=(None, 0))
    return jax.lax.map(lambda a: row(a, y), x, batch_size=2)
