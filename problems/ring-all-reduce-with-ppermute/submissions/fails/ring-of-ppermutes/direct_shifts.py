"""The naive exchange: each device sends its own row straight to every other device, by a ppermute shifted
by 1, 2, ..., n - 1 places. Right numbers in n - 1 ppermutes, but only the first is a step around the ring.

expect: requirements_not_met
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
        total = block
        for shift in range(1, n):
            total = total + jax.lax.ppermute(block, "ring", [(i, (i + shift) % n) for i in range(n)])
        return total

    return jax.shard_map(body, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
