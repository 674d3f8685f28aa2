"""The naive "before": every device gathers every row with `all_gather` and sums them itself. Same entry
function as reference.py."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P


def ring_all_reduce(x):
    n = x.shape[0]
    mesh = Mesh(np.array(jax.devices()[:n]), ("ring",))

    def per_device(block):
        return jnp.sum(jax.lax.all_gather(block, "ring"), axis=0)

    return jax.shard_map(per_device, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
