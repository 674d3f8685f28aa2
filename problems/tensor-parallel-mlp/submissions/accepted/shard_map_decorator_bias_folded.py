"""`jax.shard_map` as a decorator on a module-level mesh, with the bias of the second layer folded into the
psum on one device only (`axis_index == 0`), as some implementations add it.

expect: accepted
fails: none
"""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]), ("model",))


@partial(jax.shard_map, mesh=mesh, in_specs=(P(), P(None, "model"), P("model"), P("model", None), P()),
         out_specs=P())
def _block(x, w1, b1, w2, b2):
    h = jnp.tanh(x @ w1 + b1)
    first = (jax.lax.axis_index("model") == 0).astype(x.dtype)
    return jax.lax.psum(h @ w2 + first * b2, "model")


def megatron_mlp(x, w1, b1, w2, b2):
    return _block(x, w1, b1, w2, b2)
