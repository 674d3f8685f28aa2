"""The activation applied to the summed output instead of each device's hidden units.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def megatron_mlp(x, w1, b1, w2, b2):
    mesh = Mesh(np.array(jax.devices()[:8]), ("model",))

    def block(x, w1, b1, w2, b2):
        return jnp.tanh(jax.lax.psum((x @ w1 + b1) @ w2, "model")) + b2

    return jax.shard_map(block, mesh=mesh, in_specs=(P(), P(None, "model"), P("model"), P("model", None), P()),
                         out_specs=P())(x, w1, b1, w2, b2)
