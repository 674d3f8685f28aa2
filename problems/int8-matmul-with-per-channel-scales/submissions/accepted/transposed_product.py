"""The product written the other way round, `(W_q^T x_q^T)^T`, as kernels that keep weights as (N, K) do:
the operands of the int8 `dot_general` come in the order `w_q`, `x`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    amax = jnp.abs(x).max(axis=1)
    x_scale = jnp.where(amax > 0, amax / 127.0, 1.0)
    x_q = jnp.clip(jnp.round(x / x_scale[:, None]), -127, 127).astype(jnp.int8)
    acc_t = jax.lax.dot_general(w_q.T, x_q, (((1,), (1,)), ((), ())), preferred_element_type=jnp.int32)  # (N, M)
    return (acc_t.astype(jnp.float32) * w_scale[:, None] * x_scale[None, :]).T
