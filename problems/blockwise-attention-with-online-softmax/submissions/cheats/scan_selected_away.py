"""Cheat: `jnp.where(False, ...)` picks the unrolled answer over the scan's.

expect: requirements_not_met
fails: one-scan-over-key-blocks, running-max-in-carry
"""
import jax
import jax.numpy as jnp

def _unrolled(q, k, v, block_size):
    """The online softmax with a Python loop over the blocks (unrolled into the trace, no scan)."""
    T, d = q.shape
    S, e = v.shape
    m = jnp.full((T,), -jnp.inf)
    l = jnp.zeros((T,))
    o = jnp.zeros((T, e))
    for j in range(S // block_size):
        s = q @ k[j * block_size:(j + 1) * block_size].T / jnp.sqrt(jnp.float32(d))
        m_new = jnp.maximum(m, s.max(axis=-1))
        p = jnp.exp(s - m_new[:, None])
        c = jnp.exp(m - m_new)
        l = c * l + p.sum(-1)
        o = c[:, None] * o + p @ v[j * block_size:(j + 1) * block_size]
        m = m_new
    return o / l[:, None]

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
    return jnp.where(False, _scanned(q, k, v, block_size), _unrolled(q, k, v, block_size))
