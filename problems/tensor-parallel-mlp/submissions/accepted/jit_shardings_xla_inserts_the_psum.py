"""The JAX sharding tutorial's idiom: no shard_map, `jax.jit` with the Megatron shardings and a constraint
keeping the hidden activations split by columns; XLA's partitioner inserts the one all-reduce itself.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def megatron_mlp(x, w1, b1, w2, b2):
    mesh = Mesh(np.array(jax.devices()[:8]), ("model",))
    rep = NamedSharding(mesh, P())
    cols, rows = NamedSharding(mesh, P(None, "model")), NamedSharding(mesh, P("model", None))

    def block(x, w1, b1, w2, b2):
        h = jnp.tanh(x @ w1 + b1)
        h = jax.lax.with_sharding_constraint(h, cols)
        return h @ w2 + b2

    return jax.jit(block, in_shardings=(rep, cols, NamedSharding(mesh, P("model")), rows, rep),
                   out_shardings=rep)(x, w1, b1, w2, b2)
