"""Written the way qwix and aqt rescale a quantized einsum (neither is installed here): the activations are
quantized by a small helper that returns the int8 values and their scale, the int8 einsum asks for int32,
and the result is rescaled by one three-operand einsum `"mn,m,n->mn"` with both scales: a product that
contracts nothing, so it is a scaling, not a further matrix product.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp


def quantize(x, axis, dtype=jnp.int8):
    bound = float(jnp.iinfo(dtype).max)
    abs_max = jnp.max(jnp.abs(x), axis=axis, keepdims=True)
    scale = jnp.where(abs_max == 0, jnp.ones_like(abs_max), abs_max / bound)
    q = jnp.clip(jnp.round(x / scale), -bound, bound).astype(dtype)
    return q, jnp.squeeze(scale, axis)


@functools.partial(jax.jit, static_argnames="subscripts")
def quantized_einsum(subscripts, x, w_q, w_scale):
    x_q, x_scale = quantize(x, axis=1)
    acc = jnp.einsum(subscripts, x_q, w_q, preferred_element_type=jnp.int32)
    return jnp.einsum("mn,m,n->mn", acc.astype(jnp.float32), x_scale, w_scale)


def int8_matmul(x, w_q, w_scale):
    return quantized_einsum("mk,kn->mn", x, w_q, w_scale)
