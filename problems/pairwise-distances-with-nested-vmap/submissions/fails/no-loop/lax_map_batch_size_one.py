"""lax.map with batch_size=1 over the rows of x, a vmap over y inside: `lax.map(batch_size=...)` vmaps its
function over each batch, and that vmap counts as one of the two (every N is a whole number of batches, so
nothing is joined outside the vmaps); but `lax.map` is a loop, whatever its batch size.

expect: requirements_not_met
fails: no-loop
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2))


def pairwise_distances(x, y):
    row = jax.vmap(distance, in_axes=(None, 0))
    return jax.lax.map(lambda a: row(a, y), x, batch_size=1)
