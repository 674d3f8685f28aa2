"""Every device gets all of `x` (in_specs=P()) and sums it locally; a ring of ppermutes runs on the side,
times zero.

expect: requirements_not_met
fails: shard-map-rows, ring-of-ppermutes
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
        passing = everything[:1]
        for _ in range(n - 1):
            passing = jax.lax.ppermute(passing, "ring", ring)
        return jnp.sum(everything, axis=0, keepdims=True) + 0.0 * passing

    return jax.shard_map(body, mesh=mesh, in_specs=P(), out_specs=P("ring"))(x)
