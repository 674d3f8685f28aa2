"""Wrong answer: the carried sum is rescaled when the maximum grows, the carried output is not.

expect: wrong_answer
fails: running-max-in-carry
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
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
        return (m_new, c * l + p.sum(-1), o + p @ v_j), None

    (m, l, o), _ = jax.lax.scan(step, (jnp.full((T,), -jnp.inf), jnp.zeros((T,)), jnp.zeros((T, e))), (k.reshape(n, block_size, d), v.reshape(n, block_size, e)))
    return o / l[:, None]
