"""The whole block on every device, plus a Megatron psum of the right shape, times zero; named for the part.
The weights arrive split (XLA keeps the shard_map's placement for the one input they come from) and are
gathered back for the whole block.

expect: requirements_not_met
fails: one-all-reduce
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def megatron_mlp(x, w1, b1, w2, b2):
    mesh = Mesh(np.array(jax.devices()[:8]), ("model",))

    def block(x, w1, b1, w2, b2, w1c, b1c, w2r):
        with jax.named_scope("row_parallel_psum"):
            tp = jax.lax.psum(jnp.tanh(x @ w1c + b1c) @ w2r, "model")
        return jnp.tanh(x @ w1 + b1) @ w2 + b2 + 0.0 * tp

    return jax.shard_map(block, mesh=mesh,
                         in_specs=(P(), P(), P(), P(), P(), P(None, "model"), P("model"), P("model", None)),
                         out_specs=P(), check_vma=False)(x, w1, b1, w2, b2, w1, b1, w2)
