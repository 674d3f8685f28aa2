"""The shard_map tutorial's spelling: specs named once, the partial sums made with `jnp.matmul`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def megatron_mlp(x, w1, b1, w2, b2):
    devices = jax.devices()[:8]
    mesh = Mesh(np.asarray(devices), axis_names=("model",))
    column, entries, row, whole = P(None, "model"), P("model"), P("model", None), P()

    def per_device(x_full, w1_cols, b1_cols, w2_rows, b2_full):
        hidden = jnp.tanh(jnp.matmul(x_full, w1_cols) + b1_cols)
        return jax.lax.psum(jnp.matmul(hidden, w2_rows), axis_name="model") + b2_full

    fn = jax.shard_map(per_device, mesh=mesh, in_specs=(whole, column, entries, row, whole), out_specs=whole)
    return fn(x, w1, b1, w2, b2)
