"""XLA's own all-reduce, `jax.lax.psum`, for comparison. Same entry function as reference.py."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P


def ring_all_reduce(x):
    n = x.shape[0]
    mesh = Mesh(np.array(jax.devices()[:n]), ("ring",))
    return jax.shard_map(lambda b: jax.lax.psum(b, "ring"), mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
