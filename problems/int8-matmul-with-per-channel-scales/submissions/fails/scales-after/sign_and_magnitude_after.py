"""Right numbers, but the product's result is taken apart after the product: its sign and its magnitude
(`jnp.sign`, `jnp.abs`) are scaled separately and multiplied back. No matrix product, sum or addition runs
after the product, but arithmetic other than the scaling does, which the requirement rules out too: only
conversions, the multiplications (or divisions) by the scales, selections and moves of data belong there.

expect: requirements_not_met
fails: scales-after
"""
import jax
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    amax = jnp.max(jnp.abs(x), axis=1, keepdims=True)
    x_scale = jnp.where(amax > 0, amax / 127.0, 1.0)
    x_q = jnp.clip(jnp.round(x / x_scale), -127, 127).astype(jnp.int8)
    acc = jax.lax.dot_general(x_q, w_q, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    magnitude = jnp.abs(acc).astype(jnp.float32) * x_scale * w_scale
    return jnp.sign(acc).astype(jnp.float32) * magnitude
