"""Cheat: a primitive of the submission's own, registered under JAX's name `sub`, whose implementation
broadcasts every row of x against every row of y; the nested vmap is decorative.

expect: requirements_not_met
fails: all-pairs-at-once
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

sub_p = Primitive("sub")


def _impl(x, y):
    return x[:, None, :] - y[None, :, :]


sub_p.def_impl(_impl)
sub_p.def_abstract_eval(lambda x, y: jax.core.ShapedArray((x.shape[0], y.shape[0], x.shape[1]), x.dtype))
mlir.register_lowering(sub_p, mlir.lower_fun(_impl, multiple_results=False))


def pairwise_distances(x, y):
    jax.vmap(jax.vmap(lambda a, b: jnp.sum(a - b), (None, 0)), (0, None))(x, y)
    return jnp.sqrt(jnp.sum(sub_p.bind(x, y) ** 2, axis=-1))
