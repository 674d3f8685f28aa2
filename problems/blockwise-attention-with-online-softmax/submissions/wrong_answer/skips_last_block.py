"""Wrong answer: an off-by-one in the number of steps, `S // block_size - 1`, so the last block of keys is
never read (right only when there is one block, and then the scan has no step at all).

expect: wrong_answer
fails: one-scan-over-key-blocks
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size

    def step(carry, j):
        m, l, o = carry
        k_j = jax.lax.dynamic_slice_in_dim(k, j * block_size, block_size)
        v_j = jax.lax.dynamic_slice_in_dim(v, j * block_size, block_size)
        s = q @ k_j.T / jnp.sqrt(jnp.float32(d))
        m_new = jnp.maximum(m, s.max(axis=-1))
        p = jnp.exp(s - m_new[:, None])
        c = jnp.exp(m - m_new)
        return (m_new, c * l + p.sum(-1), c[:, None] * o + p @ v_j), None

    init = (jnp.full((T,), -jnp.inf), jnp.zeros((T,)), jnp.zeros((T, e)))
    (m, l, o), _ = jax.lax.scan(step, init, jnp.arange(n - 1))
    return o / l[:, None]
