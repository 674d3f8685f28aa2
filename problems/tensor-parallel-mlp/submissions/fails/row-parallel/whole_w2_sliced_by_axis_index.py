"""Column-parallel first layer and one psum, but `w2` is handed whole to every device, which cuts out its
rows with `axis_index`.

expect: requirements_not_met
fails: row-parallel
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def megatron_mlp(x, w1, b1, w2, b2):
    mesh = Mesh(np.array(jax.devices()[:8]), ("model",))
    per = w2.shape[0] // 8

    def block(x, w1, b1, w2, b2):
        w2r = jax.lax.dynamic_slice_in_dim(w2, jax.lax.axis_index("model") * per, per, axis=0)
        return jax.lax.psum(jnp.tanh(x @ w1 + b1) @ w2r, "model") + b2

    return jax.shard_map(block, mesh=mesh, in_specs=(P(), P(None, "model"), P("model"), P(), P()), out_specs=P(),
                         check_vma=False)(x, w1, b1, w2, b2)
