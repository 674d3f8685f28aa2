"""Classic mistake: the int32 accumulator stored as bfloat16 (the model's activation dtype) before
scaling, which keeps only 8 bits of it: the output no longer follows the exact sum (both requirements
that read the product say so).

expect: wrong_answer
fails: int8-product, scales-after
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
    acc = acc.astype(jnp.bfloat16)  # "the activations' dtype"
    return acc.astype(jnp.float32) * s * w_scale
