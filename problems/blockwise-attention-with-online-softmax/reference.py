import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    num_blocks = S // block_size
    k_blocks = k.reshape(num_blocks, block_size, d)
    v_blocks = v.reshape(num_blocks, block_size, e)
    scale = 1.0 / jnp.sqrt(jnp.float32(d))

    def step(carry, block):
        m, l, o = carry                                  # running max (T,), sum (T,), output (T, e)
        k_j, v_j = block                                 # one block of keys and values
        s = (q @ k_j.T) * scale                          # this block's scores, (T, block_size)
        m_new = jnp.maximum(m, s.max(axis=-1))
        p = jnp.exp(s - m_new[:, None])
        correction = jnp.exp(m - m_new)                  # rescales what was summed under the old maximum
        l = l * correction + p.sum(axis=-1)
        o = o * correction[:, None] + p @ v_j
        return (m_new, l, o), None

    init = (jnp.full((T,), -jnp.inf, jnp.float32), jnp.zeros((T,), jnp.float32), jnp.zeros((T, e), jnp.float32))
    (m, l, o), _ = jax.lax.scan(step, init, (k_blocks, v_blocks))
    return o / l[:, None]
