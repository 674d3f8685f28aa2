"""The int8 path computes the answer, and a float32 matmul of the dequantized weights is added and
subtracted again: the weights reach the output around the int8 product, and an addition follows it.
(Right numbers up to float rounding.)

expect: requirements_not_met
fails: no-dequantized-matmul, scales-after
"""
import jax
import jax.numpy as jnp


def quantize_rows(x):
    amax = jnp.max(jnp.abs(x), axis=1, keepdims=True)
    s = jnp.where(amax > 0, amax / 127.0, 1.0)
    return jnp.clip(jnp.round(x / s), -127, 127).astype(jnp.int8), s


def int8_matmul(x, w_q, w_scale):
    x_q, s = quantize_rows(x)
    acc = jax.lax.dot_general(x_q, w_q, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    float_path = (x_q.astype(jnp.float32) * s) @ (w_q.astype(jnp.float32) * w_scale)
    return acc.astype(jnp.float32) * s * w_scale + float_path - float_path
