"""The body closes over the whole `x` (so JAX hands every device a replicated copy) and sums it; the ring
it runs on its own row is multiplied by zero.

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

    def body(block):
        passing = block
        for _ in range(n - 1):
            passing = jax.lax.ppermute(passing, "ring", ring)
        return jnp.sum(x, axis=0, keepdims=True) + 0.0 * passing

    return jax.shard_map(body, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
