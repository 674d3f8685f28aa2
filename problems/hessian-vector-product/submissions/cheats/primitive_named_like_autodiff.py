"""A primitive of its own named `custom_jvp_call`, whose implementation and lowering write the product out
by hand: only named like JAX's.

expect: requirements_not_met
fails: none
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

hvp_p = Primitive("custom_jvp_call")
hvp_p.multiple_results = True


def _impl(w, x, y, v):
    n = x.shape[0]
    p = jax.nn.sigmoid(x @ w)
    return [x.T @ (p - y) / n, x.T @ (p * (1 - p) * (x @ v)) / n]


hvp_p.def_impl(_impl)
hvp_p.def_abstract_eval(lambda w, x, y, v: [jax.core.ShapedArray(w.shape, w.dtype)] * 2)
mlir.register_lowering(hvp_p, mlir.lower_fun(_impl, multiple_results=True))


def hvp(w, x, y, v):
    grad, product = hvp_p.bind(w, x, y, v)
    return {"grad": grad, "hvp": product}
