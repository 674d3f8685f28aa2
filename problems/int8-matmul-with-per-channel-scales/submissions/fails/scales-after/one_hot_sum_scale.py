"""The per-channel scales applied as a multiply by a diagonal and a sum over it: right numbers, but a
reduction after the product.

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
    acc = jax.lax.dot_general(x_q, w_q, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    scaled = acc.astype(jnp.float32)[:, :, None] * jnp.diag(w_scale)[None, :, :]
    return jnp.sum(scaled, axis=1) * s
