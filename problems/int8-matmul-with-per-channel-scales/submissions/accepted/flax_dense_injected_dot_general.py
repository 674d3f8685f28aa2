"""Flax style: a `Dense`-like apply function takes its `dot_general` as an argument (as `nn.Dense(dot_general=
...)` does), and the injected one quantizes the input per row and multiplies int8 by int8 into int32. The
parameters arrive as a dict with a frozen int8 kernel and its per-channel scale.

expect: accepted
fails: none
"""
import functools

import jax.numpy as jnp
from jax import lax


def int8_dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    amax = jnp.max(jnp.abs(lhs), axis=-1, keepdims=True)
    lhs_scale = jnp.where(amax > 0, amax / 127.0, 1.0)
    lhs_q = jnp.clip(jnp.round(lhs / lhs_scale), -127, 127).astype(jnp.int8)
    out = lax.dot_general(lhs_q, rhs, dimension_numbers, preferred_element_type=jnp.int32)
    return out.astype(jnp.float32) * lhs_scale


def dense_apply(params, inputs, dot_general=lax.dot_general):
    kernel = params["kernel"]
    y = dot_general(inputs, kernel, (((inputs.ndim - 1,), (0,)), ((), ())))
    return y * params["kernel_scale"]


def int8_matmul(x, w_q, w_scale):
    params = {"kernel": w_q, "kernel_scale": w_scale}
    return dense_apply(params, x, dot_general=functools.partial(int8_dot_general))
