"""`jax.lax.psum` inside the shard_map: the library all-reduce, no ring.

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
    return jax.shard_map(lambda b: jax.lax.psum(b, "ring"), mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
