"""The ring the other way round (every device sends to its left neighbour), its steps in a `lax.scan` of
length n - 1.

expect: accepted
fails: none
"""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P


def ring_all_reduce(x):
    n = x.shape[0]
    mesh = Mesh(np.array(jax.devices()[:n]), ("r",))
    left = [(i, (i - 1) % n) for i in range(n)]

    def body(block):
        def step(carry, _):
            total, passing = carry
            passing = jax.lax.ppermute(passing, "r", left)
            return (total + passing, passing), None

        (total, _), _ = jax.lax.scan(step, (block, block), None, length=n - 1)
        return total

    return jax.shard_map(body, mesh=mesh, in_specs=P("r"), out_specs=P("r"))(x)
