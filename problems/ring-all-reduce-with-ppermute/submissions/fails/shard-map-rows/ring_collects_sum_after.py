"""A ring that only collects: each device passes rows around the ring for n - 1 steps and keeps every row it
is handed, the shard_map returns the collected blocks, and `jnp.sum` adds them up after it. Every ppermute's
result reaches the output, but the sum is done outside the devices: "nothing summed outside it" is read on
the program, so shard-map-rows fails.

expect: requirements_not_met
fails: shard-map-rows
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P


def ring_all_reduce(x):
    n, d = x.shape
    mesh = Mesh(np.array(jax.devices()[:n]), ("ring",))
    to_the_right = [(i, (i + 1) % n) for i in range(n)]

    def per_device(block):                      # block: (1, d)
        held, passing = [block], block
        for _ in range(n - 1):
            passing = jax.lax.ppermute(passing, "ring", to_the_right)
            held.append(passing)
        return jnp.stack(held, axis=1)          # (1, n, d): every row this device saw, not yet added

    collected = jax.shard_map(per_device, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
    return jnp.sum(collected, axis=1)           # the sum, outside the ring
