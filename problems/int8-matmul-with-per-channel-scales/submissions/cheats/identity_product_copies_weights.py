"""An int8 product of a plain identity with w_q copies the weights into int32 (its lhs does not come
from x), then a float32 matmul with the dequantized x: w_q reaches the output through no product with x.

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
    eye = jnp.eye(w_q.shape[0], dtype=jnp.int8)
    w_copy = jax.lax.dot_general(eye, w_q, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return (x_q.astype(jnp.float32) * s) @ (w_copy.astype(jnp.float32) * w_scale)
