"""The right ring, with every received block passed through the host by an identity `jax.pure_callback`.

expect: requirements_not_met
fails: no-shortcut
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
        total, passing = block, block
        for _ in range(n - 1):
            passing = jax.lax.ppermute(passing, "ring", ring)
            total = total + jax.pure_callback(np.asarray, jax.ShapeDtypeStruct(passing.shape, passing.dtype),
                                              passing, vmap_method="sequential")
        return total

    return jax.shard_map(body, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"), check_vma=False)(x)
