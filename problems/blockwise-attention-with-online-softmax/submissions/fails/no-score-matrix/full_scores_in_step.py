"""Right numbers, but every step computes all T x S scores and slices its own block out of them.

expect: requirements_not_met
fails: no-score-matrix
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size

    def step(carry, j):
        m, l, o = carry
        s = jax.lax.dynamic_slice_in_dim(q @ k.T / jnp.sqrt(jnp.float32(d)), j * block_size, block_size, axis=1)
        v_j = jax.lax.dynamic_slice_in_dim(v, j * block_size, block_size)
        m_new = jnp.maximum(m, s.max(axis=-1))
        p = jnp.exp(s - m_new[:, None])
        c = jnp.exp(m - m_new)
        return (m_new, c * l + p.sum(-1), c[:, None] * o + p @ v_j), None

    init = (jnp.full((T,), -jnp.inf), jnp.zeros((T,)), jnp.zeros((T, e)))
    (m, l, o), _ = jax.lax.scan(step, init, jnp.arange(n))
    return o / l[:, None]
