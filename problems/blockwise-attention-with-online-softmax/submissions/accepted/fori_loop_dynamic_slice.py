"""Accepted: `lax.fori_loop` with fixed bounds (it traces to a scan) and `lax.dynamic_slice_in_dim` to read
block i of the keys and values; the scale folded into the queries once.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    e = v.shape[1]
    q = q * (d ** -0.5)

    def body(i, carry):
        m, l, acc = carry
        k_i = jax.lax.dynamic_slice_in_dim(k, i * block_size, block_size)
        v_i = jax.lax.dynamic_slice_in_dim(v, i * block_size, block_size)
        s = q @ k_i.T
        m_new = jnp.maximum(m, jnp.max(s, axis=1))
        p = jnp.exp(s - m_new[:, None])
        alpha = jnp.exp(m - m_new)
        return m_new, alpha * l + jnp.sum(p, axis=1), alpha[:, None] * acc + p @ v_i

    init = (jnp.full((T,), -jnp.inf), jnp.zeros((T,)), jnp.zeros((T, e)))
    m, l, acc = jax.lax.fori_loop(0, k.shape[0] // block_size, body, init)
    return acc / l[:, None]
