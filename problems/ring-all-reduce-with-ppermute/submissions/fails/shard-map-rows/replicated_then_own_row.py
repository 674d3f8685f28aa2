"""Every device receives all of `x` (in_specs=P()) and picks its own row with `axis_index`, then runs a
correct ring: right numbers, but each device held every row from the start, so nothing forced the rows to
travel.

expect: requirements_not_met
fails: shard-map-rows
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P


def ring_all_reduce(x):
    n = x.shape[0]
    mesh = Mesh(np.array(jax.devices()[:n]), ("ring",))
    ring = [(i, (i + 1) % n) for i in range(n)]

    def body(everything):
        block = jax.lax.dynamic_slice_in_dim(everything, jax.lax.axis_index("ring"), 1)
        total, passing = block, block
        for _ in range(n - 1):
            passing = jax.lax.ppermute(passing, "ring", ring)
            total = total + passing
        return total

    return jax.shard_map(body, mesh=mesh, in_specs=P(), out_specs=P("ring"))(x)
