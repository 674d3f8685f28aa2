"""maxtext-style: `jax.make_mesh` with an automatic axis, `functools.partial(jax.shard_map, ...)` as a
decorator, and the n - 1 steps in a `lax.fori_loop` carrying (total, block).

expect: accepted
fails: none
"""
import functools

import jax
from jax.sharding import AxisType, PartitionSpec as P


def ring_all_reduce(x):
    n = x.shape[0]
    mesh = jax.make_mesh((n,), ("devices",), axis_types=(AxisType.Auto,), devices=jax.devices()[:n])
    perm = [(i, (i + 1) % n) for i in range(n)]

    @functools.partial(jax.shard_map, mesh=mesh, in_specs=P("devices"), out_specs=P("devices"))
    def allreduce(block):
        def step(_, carry):
            total, passing = carry
            passing = jax.lax.ppermute(passing, axis_name="devices", perm=perm)
            return total + passing, passing

        total, _ = jax.lax.fori_loop(0, n - 1, step, (block, block))
        return total

    return allreduce(x)
