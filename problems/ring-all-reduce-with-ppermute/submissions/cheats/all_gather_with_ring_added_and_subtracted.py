"""all_gather and a sum do the work; the ring's total is added and subtracted again.

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
        total, passing = block, block
        for _ in range(n - 1):
            passing = jax.lax.ppermute(passing, "ring", ring)
            total = total + passing
        gathered = jax.lax.all_gather(block, "ring").sum(axis=0)
        return gathered + total - total

    return jax.shard_map(body, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
