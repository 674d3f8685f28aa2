"""Right numbers with `lax.while_loop` over the blocks: a while loop is not a scan of known length.

expect: requirements_not_met
fails: one-scan-over-key-blocks
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size

    def body(state):
        j, m, l, o = state
        k_j = jax.lax.dynamic_slice_in_dim(k, j * block_size, block_size)
        v_j = jax.lax.dynamic_slice_in_dim(v, j * block_size, block_size)
        s = q @ k_j.T / jnp.sqrt(jnp.float32(d))
        m_new = jnp.maximum(m, s.max(axis=-1))
        p = jnp.exp(s - m_new[:, None])
        c = jnp.exp(m - m_new)
        return j + 1, m_new, c * l + p.sum(-1), c[:, None] * o + p @ v_j

    init = (0, jnp.full((T,), -jnp.inf), jnp.zeros((T,)), jnp.zeros((T, e)))
    _, m, l, o = jax.lax.while_loop(lambda s: s[0] < n, body, init)
    return o / l[:, None]
