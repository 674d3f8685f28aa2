"""`b2` added on every device before the psum: it is summed 8 times.

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
        return jax.lax.psum(jnp.tanh(x @ w1 + b1) @ w2 + b2, "model")

    return jax.shard_map(block, mesh=mesh, in_specs=(P(), P(None, "model"), P("model"), P("model", None), P()),
                         out_specs=P())(x, w1, b1, w2, b2)
