"""Divides by n at the end: an all-reduce of the mean, not of the sum.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P


def ring_all_reduce(x):
    n = x.shape[0]
    mesh = Mesh(np.array(jax.devices()[:n]), ("ring",))
    ring = [(i, (i + 1) % n) for i in range(n)]

    def body(block):
        total, passing = block, block
        for _ in range(n - 1):
            passing = jax.lax.ppermute(passing, "ring", ring)
            total = total + passing
        return total / n

    return jax.shard_map(body, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
