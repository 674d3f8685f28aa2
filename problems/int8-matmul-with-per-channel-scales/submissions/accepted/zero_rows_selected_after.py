"""Zero rows handled after the product: the scale divides by `amax` only where it is positive, and
`jnp.where` sets the output of all-zero rows to 0 after the scaling (a select is not a sum).

expect: accepted
fails: none
"""
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    amax = jnp.max(jnp.abs(x), axis=1, keepdims=True)
    nonzero = amax > 0
    safe = jnp.where(nonzero, amax, 1.0)
    x_q = jnp.clip(jnp.round(x * (127.0 / safe)), -127, 127).astype(jnp.int8)
    acc = jnp.matmul(x_q, w_q, preferred_element_type=jnp.int32)
    y = acc.astype(jnp.float32) * (safe / 127.0) * w_scale
    return jnp.where(nonzero, y, 0.0)
