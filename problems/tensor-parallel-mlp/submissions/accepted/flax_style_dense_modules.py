"""Flax-style modules in plain JAX: a ColumnParallelLinear and a RowParallelLinear (as Megatron names
them), each applied to the device's local block inside `shard_map`; the row-parallel layer reduces.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


class ColumnParallelLinear:
    def __init__(self, kernel, bias):
        self.kernel, self.bias = kernel, bias

    def __call__(self, x):
        return jnp.einsum("bd,dh->bh", x, self.kernel) + self.bias


class RowParallelLinear:
    def __init__(self, kernel, bias, axis):
        self.kernel, self.bias, self.axis = kernel, bias, axis

    def __call__(self, h):
        return jax.lax.psum(jnp.einsum("bh,hd->bd", h, self.kernel), self.axis) + self.bias


def megatron_mlp(x, w1, b1, w2, b2):
    mesh = Mesh(np.array(jax.devices()[:8]), ("model",))

    def block(x, w1, b1, w2, b2):
        h = jnp.tanh(ColumnParallelLinear(w1, b1)(x))
        return RowParallelLinear(w2, b2, "model")(h)

    specs = (P(), P(None, "model"), P("model"), P("model", None), P())
    return jax.shard_map(block, mesh=mesh, in_specs=specs, out_specs=P())(x, w1, b1, w2, b2)
