"""The right ring in a `lax.while_loop` that counts its steps at run time: right numbers, but the program
does not fix the number of steps.

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

    def body(block):
        def step(carry):
            s, total, passing = carry
            passing = jax.lax.ppermute(passing, "ring", ring)
            return s + 1, total + passing, passing

        _, total, _ = jax.lax.while_loop(lambda c: c[0] < n - 1, step, (0, block, block))
        return total

    return jax.shard_map(body, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
