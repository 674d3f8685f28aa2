"""A primitive registered under the name `dot_general` that loops over the examples.

expect: requirements_not_met
fails: batched-not-looped, stable-softmax
"""
# The scores come from a primitive the code defines itself, named like JAX's `dot_general`; its lowering
# computes each example's scores in a Python loop. The grader cannot see inside it: neither how it treats
# the examples nor which axis of its result is the key axis.
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

dot_p = Primitive("dot_general")


def _impl(q, k):
    return jnp.stack([q[b] @ k[b].T for b in range(q.shape[0])])


dot_p.def_impl(_impl)
dot_p.def_abstract_eval(lambda q, k: jax.core.ShapedArray(q.shape[:2] + k.shape[1:2], q.dtype))
mlir.register_lowering(dot_p, mlir.lower_fun(_impl, multiple_results=False))


def attention(q, k, v):
    s = dot_p.bind(q, k) / jnp.sqrt(q.shape[-1])
    return jnp.einsum("bts,bse->bte", jax.nn.softmax(s, axis=-1), v)
