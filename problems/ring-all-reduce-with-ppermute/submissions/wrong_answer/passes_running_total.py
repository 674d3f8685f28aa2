"""Passes the running total instead of the block that just arrived: from three devices on, rows are counted
more than once.

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
        total = block
        for _ in range(n - 1):
            total = total + jax.lax.ppermute(total, "ring", ring)
        return total

    return jax.shard_map(body, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
