"""A primitive registered under the name `exp`.

expect: requirements_not_met
fails: batched-not-looped, stable-softmax
"""
# The row maximum is subtracted, but the exponential is a primitive the code defines itself, named like
# JAX's `exp`: the grader cannot tell what it computes (its lowering could exponentiate anything) nor how
# it treats the examples.
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

exp_p = Primitive("exp")
exp_p.def_impl(jnp.exp)
exp_p.def_abstract_eval(lambda x: jax.core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(exp_p, mlir.lower_fun(jnp.exp, multiple_results=False))


def attention(q, k, v):
    s = jnp.einsum("btd,bsd->bts", q, k) / jnp.sqrt(q.shape[-1])
    e = exp_p.bind(s - s.max(axis=-1, keepdims=True))
    return jnp.einsum("bts,bse->bte", e / e.sum(axis=-1, keepdims=True), v)
