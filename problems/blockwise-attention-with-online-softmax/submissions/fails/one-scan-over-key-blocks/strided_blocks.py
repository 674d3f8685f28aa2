"""Right numbers (softmax does not care about the order of the keys), but the blocks are strided: step j gets
keys j, j + n, j + 2n, ... from all over the sequence instead of keys j * block_size to (j + 1) * block_size
- 1.

expect: requirements_not_met
fails: one-scan-over-key-blocks
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size
    kb = k.reshape(block_size, n, d).transpose(1, 0, 2)
    vb = v.reshape(block_size, n, e).transpose(1, 0, 2)

    def step(carry, kv):
        m, l, o = carry
        k_j, v_j = kv
        s = q @ k_j.T / jnp.sqrt(jnp.float32(d))
        m_new = jnp.maximum(m, s.max(axis=-1))
        p = jnp.exp(s - m_new[:, None])
        c = jnp.exp(m - m_new)
        return (m_new, c * l + p.sum(-1), c[:, None] * o + p @ v_j), None

    init = (jnp.full((T,), -jnp.inf), jnp.zeros((T,)), jnp.zeros((T, e)))
    (m, l, o), _ = jax.lax.scan(step, init, (kb, vb))
    return o / l[:, None]
