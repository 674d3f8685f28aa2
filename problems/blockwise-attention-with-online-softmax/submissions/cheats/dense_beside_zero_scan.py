"""Cheat: the dense softmax over the full (T, S) score matrix, plus zero times a right blockwise scan.

expect: requirements_not_met
fails: one-scan-over-key-blocks, running-max-in-carry, no-score-matrix
"""
import jax
import jax.numpy as jnp

def _scanned(q, k, v, block_size):
    """The reference's online softmax: one scan over the key blocks."""
    T, d = q.shape
    S, e = v.shape
    n = S // block_size

    def step(carry, kv):
        m, l, o = carry
        k_j, v_j = kv
        s = q @ k_j.T / jnp.sqrt(jnp.float32(d))
        m_new = jnp.maximum(m, s.max(axis=-1))
        p = jnp.exp(s - m_new[:, None])
        c = jnp.exp(m - m_new)
        return (m_new, c * l + p.sum(-1), c[:, None] * o + p @ v_j), None

    init = (jnp.full((T,), -jnp.inf), jnp.zeros((T,)), jnp.zeros((T, e)))
    (m, l, o), _ = jax.lax.scan(step, init, (k.reshape(n, block_size, d), v.reshape(n, block_size, e)))
    return o / l[:, None]


def blockwise_attention(q, k, v, block_size):
    dense = jax.nn.softmax(q @ k.T / jnp.sqrt(jnp.float32(q.shape[1])), axis=-1) @ v
    return dense + 0.0 * _scanned(q, k, v, block_size)
