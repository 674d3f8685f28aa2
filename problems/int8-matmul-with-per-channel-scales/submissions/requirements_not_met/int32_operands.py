"""Both operands cast to int32 before a plain matmul: right numbers, but the product reads int32
weights (four times the bytes), not int8 ones.

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
    acc = x_q.astype(jnp.int32) @ w_q.astype(jnp.int32)
    return acc.astype(jnp.float32) * s * w_scale
