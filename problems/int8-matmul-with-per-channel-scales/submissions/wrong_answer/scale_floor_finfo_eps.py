"""The scale clamped from below by float32's machine epsilon (torchao's `scale.clamp(min=torch.finfo(
torch.float32).eps)`), which also keeps zero rows from dividing by zero: a row whose largest magnitude is
below 127 * 1.19e-7 = 1.5e-5 gets a larger scale than max|x| / 127 and loses its levels.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    amax = jnp.max(jnp.abs(x), axis=-1, keepdims=True)
    x_scale = jnp.maximum(amax / 127.0, jnp.finfo(jnp.float32).eps)
    x_q = jnp.clip(jnp.round(x / x_scale), -127, 127).astype(jnp.int8)
    acc = jax.lax.dot_general(x_q, w_q, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return acc.astype(jnp.float32) * (x_scale * w_scale[None, :])
