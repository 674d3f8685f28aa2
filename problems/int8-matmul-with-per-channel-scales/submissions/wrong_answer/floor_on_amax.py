"""A floor on each row's largest magnitude instead of a special case for zero rows (the clamp
`amax.clamp(min=1e-5)` of PyTorch quantization code): an all-zero row gets a harmless scale, but a row whose
largest magnitude is below the floor is quantized with too large a scale, to a few levels or to zeros.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    amax = jnp.maximum(jnp.max(jnp.abs(x), axis=1, keepdims=True), 1e-5)
    x_scale = amax / 127.0
    x_q = jnp.clip(jnp.round(x / x_scale), -127, 127).astype(jnp.int8)
    acc = jnp.matmul(x_q, w_q, preferred_element_type=jnp.int32)
    return acc.astype(jnp.float32) * x_scale * w_scale
