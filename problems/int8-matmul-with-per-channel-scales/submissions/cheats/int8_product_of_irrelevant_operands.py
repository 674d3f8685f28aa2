"""An int8 x int8 -> int32 product of the quantized x with itself (not with w_q), added times zero;
the answer comes from a float32 matmul of the dequantized weights.

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
    gram = jax.lax.dot_general(x_q, x_q, (((1,), (1,)), ((), ())), preferred_element_type=jnp.int32)
    out = (x_q.astype(jnp.float32) * s) @ (w_q.astype(jnp.float32) * w_scale)
    return out + 0.0 * jnp.sum(gram)
