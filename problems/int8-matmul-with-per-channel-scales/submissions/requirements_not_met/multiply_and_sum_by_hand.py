"""The product written as a broadcast multiply and a sum in int32, with no dot_general at all.

expect: requirements_not_met
fails: int8-product, no-dequantized-matmul, scales-after
"""
import jax
import jax.numpy as jnp


def quantize_rows(x):
    amax = jnp.max(jnp.abs(x), axis=1, keepdims=True)
    s = jnp.where(amax > 0, amax / 127.0, 1.0)
    return jnp.clip(jnp.round(x / s), -127, 127).astype(jnp.int8), s


def int8_matmul(x, w_q, w_scale):
    x_q, s = quantize_rows(x)
    acc = jnp.sum(x_q.astype(jnp.int32)[:, :, None] * w_q.astype(jnp.int32)[None, :, :], axis=1)
    return acc.astype(jnp.float32) * s * w_scale
