"""Gathers every row on every device with `all_gather` and sums them: n times the memory, no ring.

expect: requirements_not_met
fails: ring-of-ppermutes, no-shortcut
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
        return jnp.sum(jax.lax.all_gather(block, "ring"), axis=0)

    return jax.shard_map(body, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
