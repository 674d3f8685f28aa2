"""Column-parallel first layer, then the hidden activations gathered onto every device (`all_gather`) and
multiplied by the whole `w2`: the activation all-gather Megatron avoids.

expect: requirements_not_met
fails: row-parallel, one-all-reduce
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def megatron_mlp(x, w1, b1, w2, b2):
    mesh = Mesh(np.array(jax.devices()[:8]), ("model",))

    def block(x, w1, b1, w2, b2):
        h = jnp.tanh(x @ w1 + b1)
        h_all = jax.lax.all_gather(h, "model", axis=1, tiled=True)
        return h_all @ w2 + b2

    return jax.shard_map(block, mesh=mesh, in_specs=(P(), P(None, "model"), P("model"), P(), P()),
                         out_specs=P(), check_vma=False)(x, w1, b1, w2, b2)
