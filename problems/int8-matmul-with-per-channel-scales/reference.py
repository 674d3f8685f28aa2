"""Reference: quantize each row of x to int8 with its own scale, multiply int8 by int8 into int32, then
apply the row's scale and each output channel's scale to the int32 result."""
import jax
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    amax = jnp.max(jnp.abs(x), axis=1, keepdims=True)              # (M, 1): each row's largest magnitude
    x_scale = jnp.where(amax > 0, amax / 127.0, 1.0)                # an all-zero row keeps scale 1
    x_q = jnp.clip(jnp.round(x / x_scale), -127, 127).astype(jnp.int8)
    acc = jax.lax.dot_general(x_q, w_q, (((1,), (0,)), ((), ())),
                              preferred_element_type=jnp.int32)     # (M, N), exact in int32
    return acc.astype(jnp.float32) * x_scale * w_scale[None, :]
