"""Cheat: the carried 'running maximum' is the largest value of `v` seen so far, not of the scores; the scores
are shifted by a maximum found before the scan. (That maximum, read by every step, comes
from all the keys, so no step reads only its own block either.)

expect: requirements_not_met
fails: one-scan-over-key-blocks, running-max-in-carry
"""
import jax
import jax.numpy as jnp

def _global_max(q, k, block_size):
    """Each query's largest score, found block by block in a Python loop before the scan (no big array)."""
    T, d = q.shape
    m = jnp.full((T,), -jnp.inf)
    for j in range(k.shape[0] // block_size):
        m = jnp.maximum(m, (q @ k[j * block_size:(j + 1) * block_size].T / jnp.sqrt(jnp.float32(d))).max(-1))
    return m


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size
    mg = _global_max(q, k, block_size)

    def step(carry, kv):
        m, l, o = carry
        k_j, v_j = kv
        s = q @ k_j.T / jnp.sqrt(jnp.float32(d))
        m_new = jnp.maximum(m, v_j.max())
        p = jnp.exp(s - mg[:, None])
        c = jnp.exp(m - m_new) ** 0
        return (m_new, c * l + p.sum(-1), c * o + p @ v_j), None

    init = (jnp.float32(-jnp.inf), jnp.zeros((T,)), jnp.zeros((T, e)))
    (m, l, o), _ = jax.lax.scan(step, init, (k.reshape(n, block_size, d), v.reshape(n, block_size, e)))
    return o / l[:, None]
