"""Accepted: (T, 1) running statistics kept with `keepdims=True`, `jnp.einsum` for both products, and the
blocks handed to the scan with `jnp.split`-free reshapes.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size
    kb = k.reshape(n, block_size, d)
    vb = v.reshape(n, block_size, e)

    def step(state, kv):
        m, l, o = state
        kj, vj = kv
        s = jnp.einsum("td,bd->tb", q, kj) / jnp.sqrt(d).astype(q.dtype)
        m_new = jnp.maximum(m, s.max(axis=-1, keepdims=True))
        p = jnp.exp(s - m_new)
        r = jnp.exp(m - m_new)
        return (m_new, r * l + p.sum(axis=-1, keepdims=True), r * o + jnp.einsum("tb,be->te", p, vj)), None

    state = (jnp.full((T, 1), -jnp.inf), jnp.zeros((T, 1)), jnp.zeros((T, e)))
    (m, l, o), _ = jax.lax.scan(step, state, (kb, vb))
    return o / l
