"""Starts the total at zero instead of the device's own row, so each device sums every row but its own.

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
        total, passing = jnp.zeros_like(block), block
        for _ in range(n - 1):
            passing = jax.lax.ppermute(passing, "ring", ring)
            total = total + passing
        return total

    return jax.shard_map(body, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
