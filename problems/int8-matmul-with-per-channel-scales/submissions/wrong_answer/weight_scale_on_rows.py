"""Classic mistake: `w_scale` applied along the rows of the output (`w_scale` resized to M, as a column)
instead of along its columns, the output channels.

expect: wrong_answer
fails: none
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
    m = acc.shape[0]
    row_scale = jnp.resize(w_scale, (m,))[:, None]
    return acc.astype(jnp.float32) * s * row_scale
