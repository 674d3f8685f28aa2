"""Runs n - 2 steps: each device misses the row n - 1 places to its left.

expect: wrong_answer
fails: ring-of-ppermutes
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
        for _ in range(n - 2):
            passing = jax.lax.ppermute(passing, "ring", ring)
            total = total + passing
        return total

    return jax.shard_map(body, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
