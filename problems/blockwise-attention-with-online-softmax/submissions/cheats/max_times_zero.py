"""Cheat: the scan carries a real running maximum beside a running log-sum-exp, but the exponentials are
taken of the scores minus the log-sum-exp plus zero times the maximum, and the 'rescaling factor'
`exp(m - m_new)` is multiplied by zero before the real one, `exp(lse - lse_new)`, is added: the running
maximum changes nothing.

expect: requirements_not_met
fails: running-max-in-carry
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size

    def step(carry, kv):
        m, lse, o = carry
        k_j, v_j = kv
        s = q @ k_j.T / jnp.sqrt(jnp.float32(d))
        m_new = jnp.maximum(m, s.max(axis=-1))
        lse_new = jnp.logaddexp(lse, jax.nn.logsumexp(s, axis=-1))
        p = jnp.exp(s - lse_new[:, None] + 0.0 * m_new[:, None])
        c = 0.0 * jnp.exp(m - m_new) + jnp.exp(lse - lse_new)
        return (m_new, lse_new, c[:, None] * o + p @ v_j), None

    init = (jnp.full((T,), -jnp.inf), jnp.full((T,), -jnp.inf), jnp.zeros((T, e)))
    (m, lse, o), _ = jax.lax.scan(step, init, (k.reshape(n, block_size, d), v.reshape(n, block_size, e)))
    return o
