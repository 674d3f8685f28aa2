import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P


def megatron_mlp(x, w1, b1, w2, b2):
    mesh = Mesh(np.array(jax.devices()[:8]), ("model",))

    def block(x, w1, b1, w2, b2):
        h = jnp.tanh(x @ w1 + b1)              # (B, H/8): this device's columns of the hidden layer
        partial = h @ w2                       # (B, D): this device's share of the output
        return jax.lax.psum(partial, "model") + b2

    return jax.shard_map(block, mesh=mesh,
                         in_specs=(P(), P(None, "model"), P("model"), P("model", None), P()),
                         out_specs=P())(x, w1, b1, w2, b2)
