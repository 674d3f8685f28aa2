"""The first half of the output channels comes from the int8 product, the rest from a float32 matmul
of the dequantized weights.

expect: requirements_not_met
fails: no-dequantized-matmul
"""
import jax
import jax.numpy as jnp


def quantize_rows(x):
    amax = jnp.max(jnp.abs(x), axis=1, keepdims=True)
    s = jnp.where(amax > 0, amax / 127.0, 1.0)
    return jnp.clip(jnp.round(x / s), -127, 127).astype(jnp.int8), s


def int8_matmul(x, w_q, w_scale):
    x_q, s = quantize_rows(x)
    h = (w_q.shape[1] + 1) // 2
    acc = jax.lax.dot_general(x_q, w_q[:, :h], (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    left = acc.astype(jnp.float32) * s * w_scale[:h]
    right = (x_q.astype(jnp.float32) * s) @ (w_q[:, h:].astype(jnp.float32) * w_scale[h:])
    return jnp.concatenate([left, right], axis=1)
