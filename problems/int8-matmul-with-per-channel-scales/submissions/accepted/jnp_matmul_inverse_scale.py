"""`jnp.matmul` with `preferred_element_type`, quantizing with the inverse scale `127 / amax` (a multiply,
not a divide) and guarding zero rows with `jnp.maximum`; the output divides by that inverse scale.

expect: accepted
fails: none
"""
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    amax = jnp.maximum(jnp.max(jnp.abs(x), axis=-1, keepdims=True), 1e-30)
    inv = 127.0 / amax
    x_q = jnp.clip(jnp.round(x * inv), -127, 127).astype(jnp.int8)
    acc = jnp.matmul(x_q, w_q, preferred_element_type=jnp.int32)
    return acc.astype(jnp.float32) / inv * w_scale
