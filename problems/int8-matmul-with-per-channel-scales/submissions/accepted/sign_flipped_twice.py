"""The product is taken with the quantized activations negated (`-x_q`, as a kernel written for a negated
layout might), so the int32 result is negated back after it: a change of sign is a multiplication by -1,
which the requirement counts as scaling. Right numbers, and nothing but conversions, sign changes and the
scales run between the product and the output.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    amax = jnp.max(jnp.abs(x), axis=1, keepdims=True)
    x_scale = jnp.where(amax > 0, amax / 127.0, 1.0)
    neg_q = (-jnp.clip(jnp.round(x / x_scale), -127, 127)).astype(jnp.int8)
    acc = jnp.matmul(neg_q, w_q, preferred_element_type=jnp.int32)
    return -(acc.astype(jnp.float32)) * x_scale * w_scale
