"""An epsilon added to the scale where it divides (`x / (scale + 1e-12)`) instead of a special case for
zero rows: invisible on ordinary rows, but on a row whose largest magnitude is near 1e-9 the scale itself is
about 1e-11, and the epsilon moves every level.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    x_scale = jnp.max(jnp.abs(x), axis=1, keepdims=True) / 127.0
    x_q = jnp.clip(jnp.round(x / (x_scale + 1e-12)), -127, 127).astype(jnp.int8)
    acc = jax.lax.dot_general(x_q, w_q, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return acc.astype(jnp.float32) * x_scale * w_scale[None, :]
