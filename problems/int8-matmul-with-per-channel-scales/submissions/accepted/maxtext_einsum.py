"""MaxText style: named einsum dimensions (`BE,EM->BM`), the weights' scale broadcast by einsum too (an
`einsum` that contracts nothing is a scaling), and `floor(v + 0.5)` rounding, the same as `jnp.round`
here since no value sits on a tie.

expect: accepted
fails: none
"""
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    amax = jnp.max(jnp.abs(x), axis=-1, keepdims=True)
    x_scale = jnp.where(amax == 0, jnp.ones_like(amax), amax / 127)
    v = x / x_scale
    x_q = (jnp.sign(v) * jnp.floor(jnp.abs(v) + 0.5)).astype(jnp.int8)
    acc = jnp.einsum("BE,EM->BM", x_q, w_q, preferred_element_type=jnp.int32)
    out = jnp.einsum("BM,M->BM", acc.astype(jnp.float32), w_scale)
    return out * x_scale
