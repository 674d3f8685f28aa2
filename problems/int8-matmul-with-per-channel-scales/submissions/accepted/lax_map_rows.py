"""Rows walked by `jax.lax.map` (a scan), each quantized and multiplied on its own; the int8 product and
its scaling sit inside the scan's body.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    def one(x_row):
        amax = jnp.max(jnp.abs(x_row))
        s = jnp.where(amax > 0, amax / 127.0, 1.0)
        q = jnp.clip(jnp.round(x_row / s), -127, 127).astype(jnp.int8)
        acc = jax.lax.dot_general(q, w_q, (((0,), (0,)), ((), ())), preferred_element_type=jnp.int32)
        return acc.astype(jnp.float32) * s * w_scale

    return jax.lax.map(one, x)
