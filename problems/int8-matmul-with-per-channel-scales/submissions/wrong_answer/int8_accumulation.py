"""Classic mistake: `jnp.dot` of two int8 arrays without `preferred_element_type` gives an int8 result,
which wraps around past 127.

expect: wrong_answer
fails: int8-product
"""
import jax
import jax.numpy as jnp


def quantize_rows(x):
    amax = jnp.max(jnp.abs(x), axis=1, keepdims=True)
    s = jnp.where(amax > 0, amax / 127.0, 1.0)
    return jnp.clip(jnp.round(x / s), -127, 127).astype(jnp.int8), s


def int8_matmul(x, w_q, w_scale):
    x_q, s = quantize_rows(x)
    return jnp.dot(x_q, w_q).astype(jnp.float32) * s * w_scale
