"""A primitive the submission registers itself under the name `custom_vjp_call`, whose implementation rounds
and whose JVP rule is the straight-through mask: right numbers, but no `jax.custom_vjp` anywhere.

expect: requirements_not_met
fails: none
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, mlir

quant_p = Primitive("custom_vjp_call")


def _impl(w, *, levels):
    return jnp.round(jnp.clip(w, -1.0, 1.0) * levels) / levels


quant_p.def_impl(_impl)
quant_p.def_abstract_eval(lambda w, *, levels: jax.core.ShapedArray(w.shape, w.dtype))
mlir.register_lowering(quant_p, mlir.lower_fun(_impl, multiple_results=False))
ad.defjvp(quant_p, lambda g, w, *, levels: g * (jnp.abs(w) <= 1.0))


def ste_value_and_grad(w, x, y, levels):
    value, grad = jax.value_and_grad(lambda w: jnp.mean((x @ quant_p.bind(w, levels=levels) - y) ** 2))(w)
    return {"loss": value, "grad": grad}
