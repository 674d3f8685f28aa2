"""Sends the own row both ways at once, half the steps to the right and half to the left: right numbers in
n - 1 ppermutes, but not one ring direction.

expect: requirements_not_met
fails: ring-of-ppermutes
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P


def ring_all_reduce(x):
    n = x.shape[0]
    mesh = Mesh(np.array(jax.devices()[:n]), ("ring",))
    ring = [(i, (i + 1) % n) for i in range(n)]
    left = [(i, (i - 1) % n) for i in range(n)]

    def body(block):
        total, to_right, to_left = block, block, block
        for s in range(n - 1):
            if s % 2 == 0:
                to_right = jax.lax.ppermute(to_right, "ring", ring)
                total = total + to_right
            else:
                to_left = jax.lax.ppermute(to_left, "ring", left)
                total = total + to_left
        return total

    return jax.shard_map(body, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
