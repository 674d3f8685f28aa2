"""Rows are treated as all zeros when their largest magnitude is below a threshold (`amax > 1e-6` instead
of `amax > 0`): a tiny but nonzero row is quantized with scale 1, to zeros, and its output row is lost.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    amax = jnp.max(jnp.abs(x), axis=1, keepdims=True)
    x_scale = jnp.where(amax > 1e-6, amax / 127.0, 1.0)
    x_q = jnp.clip(jnp.round(x / x_scale), -127, 127).astype(jnp.int8)
    acc = jnp.einsum("mk,kn->mn", x_q, w_q, preferred_element_type=jnp.int32)
    return acc.astype(jnp.float32) * x_scale * w_scale
