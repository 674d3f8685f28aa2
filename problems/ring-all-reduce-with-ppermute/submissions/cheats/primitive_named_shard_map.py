"""A primitive of its own named `shard_map` that sums the rows on one device and repeats the sum.

expect: requirements_not_met
fails: shard-map-rows, ring-of-ppermutes, no-shortcut
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

shard_map_p = Primitive("shard_map")


def _impl(x):
    return jnp.broadcast_to(jnp.sum(x, axis=0), x.shape)


shard_map_p.def_impl(_impl)
shard_map_p.def_abstract_eval(lambda x: jax.core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(shard_map_p, mlir.lower_fun(_impl, multiple_results=False))


def ring_all_reduce(x):
    return shard_map_p.bind(x)
