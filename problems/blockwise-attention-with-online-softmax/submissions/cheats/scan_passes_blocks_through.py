"""Cheat: a scan over the key blocks that only hands each block back (stacked), and the online softmax unrolled
by a Python loop over what it stacked.

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


def blockwise_attention(q, k, v, block_size):
    n = k.shape[0] // block_size
    _, (kb, vb) = jax.lax.scan(lambda c, kv: (c, kv), 0.0, (k.reshape(n, block_size, -1), v.reshape(n, block_size, -1)))
    return _unrolled(q, kb.reshape(k.shape), vb.reshape(v.shape), block_size)
