"""The all-reduce spelled as its two halves, `psum_scatter` of the shares over the rows and `all_gather`
back: the same numbers, two collectives (B must be a multiple of 8, so the rows are padded).

expect: requirements_not_met
fails: one-all-reduce
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def megatron_mlp(x, w1, b1, w2, b2):
    mesh = Mesh(np.array(jax.devices()[:8]), ("model",))
    b = x.shape[0]
    xp = jnp.pad(x, ((0, (-b) % 8), (0, 0)))

    def block(x, w1, b1, w2, b2):
        part = jnp.tanh(x @ w1 + b1) @ w2
        mine = jax.lax.psum_scatter(part, "model", scatter_dimension=0, tiled=True)
        return jax.lax.all_gather(mine, "model", axis=0, tiled=True) + b2

    out = jax.shard_map(block, mesh=mesh, in_specs=(P(), P(None, "model"), P("model"), P("model", None), P()),
                        out_specs=P(), check_vma=False)(xp, w1, b1, w2, b2)
    return out[:b]
