"""A primitive of its own named `ppermute` whose lowering runs a psum: printed like JAX's ppermute, but not
JAX's.

expect: requirements_not_met
fails: ring-of-ppermutes, no-shortcut
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import mlir
from jax.sharding import Mesh, PartitionSpec as P

ppermute_p = Primitive("ppermute")


def _impl(block, *, axis):
    return jax.lax.psum(block, axis)


ppermute_p.def_impl(_impl)
ppermute_p.def_abstract_eval(lambda block, *, axis: jax.core.ShapedArray(block.shape, block.dtype))
mlir.register_lowering(ppermute_p, mlir.lower_fun(_impl, multiple_results=False))


def ring_all_reduce(x):
    n = x.shape[0]
    mesh = Mesh(np.array(jax.devices()[:n]), ("ring",))
    body = lambda block: ppermute_p.bind(block, axis="ring")
    return jax.shard_map(body, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"), check_vma=False)(x)
