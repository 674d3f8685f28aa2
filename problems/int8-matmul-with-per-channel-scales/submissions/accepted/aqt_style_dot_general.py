"""In the style of AQT (`aqt.jax.v2`): a quantizer calibrated over the contraction axis returns the int8
tensor and its scale, and a `dot_general` wrapper multiplies the quantized operands into int32 and rescales
the result with the outer product of the two scales.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp
from jax import lax


def quantize(x, contraction_axes, bits=8):
    bound = 2.0 ** (bits - 1) - 1.0
    abs_max = jnp.max(jnp.abs(x), axis=contraction_axes, keepdims=True)
    scale = jnp.where(abs_max == 0.0, 1.0, abs_max / bound)
    q = lax.round(x / scale, lax.RoundingMethod.TO_NEAREST_EVEN)
    return jnp.clip(q, -bound, bound).astype(jnp.int8), scale


def aqt_dot_general(lhs, rhs_q, rhs_scale, dimension_numbers):
    (lhs_c, _), _ = dimension_numbers
    lhs_q, lhs_scale = quantize(lhs, tuple(lhs_c))
    acc = lax.dot_general(lhs_q, rhs_q, dimension_numbers, preferred_element_type=jnp.int32)
    return acc.astype(jnp.float32) * (lhs_scale * rhs_scale)


@functools.partial(jax.jit)
def int8_matmul(x, w_q, w_scale):
    return aqt_dot_general(x, w_q, w_scale[None, :], (((1,), (0,)), ((), ())))
