"""A primitive the submission registers itself under the name `dot_general`, which claims int8 operands
and an int32 result but whose lowering multiplies in float32: not JAX's `dot_general`.

expect: requirements_not_met
fails: int8-product, no-dequantized-matmul, scales-after
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

dot_p = Primitive("dot_general")


def _impl(a, b):
    return jnp.round(a.astype(jnp.float32) @ b.astype(jnp.float32)).astype(jnp.int32)


dot_p.def_impl(_impl)
dot_p.def_abstract_eval(lambda a, b: jax.core.ShapedArray((a.shape[0], b.shape[1]), jnp.int32))
mlir.register_lowering(dot_p, mlir.lower_fun(_impl, multiple_results=False))


def int8_matmul(x, w_q, w_scale):
    amax = jnp.max(jnp.abs(x), axis=1, keepdims=True)
    s = jnp.where(amax > 0, amax / 127.0, 1.0)
    x_q = jnp.clip(jnp.round(x / s), -127, 127).astype(jnp.int8)
    return dot_p.bind(x_q, w_q).astype(jnp.float32) * s * w_scale
