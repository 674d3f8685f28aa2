"""The textbook fake-quantization: dequantize both operands and multiply in float32. Right numbers,
but the weights are turned back into floats and no int8 product runs.

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
    return (x_q.astype(jnp.float32) * s) @ (w_q.astype(jnp.float32) * w_scale[None, :])
