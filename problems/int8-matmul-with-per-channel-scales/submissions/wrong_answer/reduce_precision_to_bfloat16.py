"""The int32 result is converted to float32 and then rounded to bfloat16's 8 bits of mantissa with
`jax.lax.reduce_precision` before the scales (as a bfloat16 pipeline's emulation would): an int32 sum above
256 loses its low bits, so the outputs are off by up to 0.4%. Both the product's requirement and
scales-after say why: the rounding is no conversion that keeps float32's bits.

expect: wrong_answer
fails: int8-product, scales-after
"""
import jax
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    amax = jnp.max(jnp.abs(x), axis=1, keepdims=True)
    x_scale = jnp.where(amax > 0, amax / 127.0, 1.0)
    x_q = jnp.clip(jnp.round(x / x_scale), -127, 127).astype(jnp.int8)
    acc = jax.lax.dot_general(x_q, w_q, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    rounded = jax.lax.reduce_precision(acc.astype(jnp.float32), exponent_bits=8, mantissa_bits=7)
    return rounded * x_scale * w_scale[None, :]
