"""An int8 x int8 -> int32 product of an identity (made to depend on x) with w_q copies the weights
out; a float32 matmul of those dequantized weights then computes the answer after the "product".

expect: requirements_not_met
fails: scales-after
"""
import jax
import jax.numpy as jnp


def quantize_rows(x):
    amax = jnp.max(jnp.abs(x), axis=1, keepdims=True)
    s = jnp.where(amax > 0, amax / 127.0, 1.0)
    return jnp.clip(jnp.round(x / s), -127, 127).astype(jnp.int8), s


def int8_matmul(x, w_q, w_scale):
    x_q, s = quantize_rows(x)
    k = w_q.shape[0]
    eye = jnp.eye(k, dtype=jnp.int8) + 0 * x_q[:1, :1]
    w_copy = jax.lax.dot_general(eye, w_q, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return (x_q.astype(jnp.float32) * s) @ (w_copy.astype(jnp.float32) * w_scale)
