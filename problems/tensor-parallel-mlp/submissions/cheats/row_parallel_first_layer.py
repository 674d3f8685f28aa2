"""The layers split the wrong way round: the first row-parallel (x's columns and w1's rows, a psum of the
B x H hidden pre-activations), the second column-parallel with the output gathered.

expect: requirements_not_met
fails: column-parallel, row-parallel, one-all-reduce
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def megatron_mlp(x, w1, b1, w2, b2):
    mesh = Mesh(np.array(jax.devices()[:8]), ("model",))
    d = x.shape[1]
    pad = (-d) % 8
    xp = jnp.pad(x, ((0, 0), (0, pad)))
    w1p = jnp.pad(w1, ((0, pad), (0, 0)))
    w2p = jnp.pad(w2, ((0, 0), (0, pad)))
    b2p = jnp.pad(b2, (0, pad))

    def block(x, w1, b1, w2, b2):
        h = jnp.tanh(jax.lax.psum(x @ w1, "model") + b1)
        return jax.lax.all_gather(h @ w2 + b2, "model", axis=1, tiled=True)

    out = jax.shard_map(block, mesh=mesh, in_specs=(P(None, "model"), P("model", None), P(), P(None, "model"),
                                                     P("model")), out_specs=P(), check_vma=False)(xp, w1p, b1, w2p, b2p)
    return out[:, :d]
