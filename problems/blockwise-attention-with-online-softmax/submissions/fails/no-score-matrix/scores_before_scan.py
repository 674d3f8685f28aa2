"""Right numbers and a right online softmax, but the full (T, S) score matrix is computed before the scan and
cut into the blocks the scan walks.

expect: requirements_not_met
fails: no-score-matrix
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size
    scores = q @ k.T / jnp.sqrt(jnp.float32(d))
    sb = scores.reshape(T, n, block_size).transpose(1, 0, 2)

    def step(carry, blk):
        m, l, o = carry
        s, v_j = blk
        m_new = jnp.maximum(m, s.max(axis=-1))
        p = jnp.exp(s - m_new[:, None])
        c = jnp.exp(m - m_new)
        return (m_new, c * l + p.sum(-1), c[:, None] * o + p @ v_j), None

    init = (jnp.full((T,), -jnp.inf), jnp.zeros((T,)), jnp.zeros((T, e)))
    (m, l, o), _ = jax.lax.scan(step, init, (sb, v.reshape(n, block_size, e)))
    return o / l[:, None]
