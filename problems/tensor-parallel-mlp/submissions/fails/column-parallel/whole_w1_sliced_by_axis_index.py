"""Each device computes only its own hidden units and one psum adds the shares, but `w1` and `b1` are
handed whole to every device, which cuts out its columns with `axis_index`.

expect: requirements_not_met
fails: column-parallel
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def megatron_mlp(x, w1, b1, w2, b2):
    mesh = Mesh(np.array(jax.devices()[:8]), ("model",))
    per = w1.shape[1] // 8

    def block(x, w1, b1, w2, b2):
        start = jax.lax.axis_index("model") * per
        w1c = jax.lax.dynamic_slice_in_dim(w1, start, per, axis=1)
        b1c = jax.lax.dynamic_slice_in_dim(b1, start, per)
        return jax.lax.psum(jnp.tanh(x @ w1c + b1c) @ w2, "model") + b2

    return jax.shard_map(block, mesh=mesh, in_specs=(P(), P(), P(), P("model", None), P()), out_specs=P(),
                         check_vma=False)(x, w1, b1, w2, b2)
