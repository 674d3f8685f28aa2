"""One row at a time, batched by `jax.vmap`: a vector is quantized with its own scale and multiplied by
the int8 weights with `jnp.dot(..., preferred_element_type=jnp.int32)`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def row(x_row, w_q, w_scale):
    amax = jnp.max(jnp.abs(x_row))
    s = jnp.where(amax > 0, amax / 127.0, 1.0)
    q = jnp.clip(jnp.round(x_row / s), -127, 127).astype(jnp.int8)
    return jnp.dot(q, w_q, preferred_element_type=jnp.int32).astype(jnp.float32) * (s * w_scale)


def int8_matmul(x, w_q, w_scale):
    return jax.vmap(row, in_axes=(0, None, None))(x, w_q, w_scale)
