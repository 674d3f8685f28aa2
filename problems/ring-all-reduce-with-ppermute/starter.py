import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P


def ring_all_reduce(x):
    """All-reduce (sum) the n rows of x, row i living on device i, with
    a ring of ppermutes.

    x: (n, d) float32, 2 <= n <= 4. Returns (n, d) float32: every row is
    the sum of all rows.
    """
    n = x.shape[0]
    mesh = Mesh(np.array(jax.devices()[:n]), ("ring",))
    # TODO: inside jax.shard_map(per_device, mesh=mesh,
    # in_specs=P("ring"), out_specs=P("ring")),
    # pass blocks to the right neighbour with jax.lax.ppermute, n - 1
    # times, adding what arrives.
    raise NotImplementedError
