"""The scores of every key computed before the loop, `q @ k.T` whole, and the scan then walks slabs of that
score array, one block of columns a step, with the online softmax done right. Step j reads no key at all, but
the (T, S) score array it slices was computed from every key at once: that is the array the third requirement
forbids, whatever the loop does with it afterwards.

expect: requirements_not_met
fails: no-score-matrix
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    num_blocks = S // block_size
    scores = (q @ k.T) / jnp.sqrt(jnp.float32(d))                       # (T, S): every key's scores at once
    slabs = scores.reshape(T, num_blocks, block_size).transpose(1, 0, 2)  # (num_blocks, T, block_size)
    v_blocks = v.reshape(num_blocks, block_size, e)

    def step(carry, block):
        m, l, o = carry
        s, v_j = block
        m_new = jnp.maximum(m, s.max(axis=-1))
        p = jnp.exp(s - m_new[:, None])
        correction = jnp.exp(m - m_new)
        return (m_new, l * correction + p.sum(axis=-1), o * correction[:, None] + p @ v_j), None

    init = (jnp.full((T,), -jnp.inf, jnp.float32), jnp.zeros((T,), jnp.float32), jnp.zeros((T, e), jnp.float32))
    (m, l, o), _ = jax.lax.scan(step, init, (slabs, v_blocks))
    return o / l[:, None]
