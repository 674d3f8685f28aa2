"""Accepted: the online softmax written for one query (a vector of scores per block) and `jax.vmap`ped over
the queries; the scan is batched, one scan still walks the key blocks.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def one_query(qt, k_blocks, v_blocks, scale):
    def step(carry, kv):
        m, l, o = carry
        kj, vj = kv
        s = kj @ qt * scale
        m_new = jnp.maximum(m, jnp.max(s))
        p = jnp.exp(s - m_new)
        c = jnp.exp(m - m_new)
        return (m_new, c * l + jnp.sum(p), c * o + p @ vj), None

    init = (jnp.float32(-jnp.inf), jnp.float32(0.0), jnp.zeros(v_blocks.shape[-1], jnp.float32))
    (m, l, o), _ = jax.lax.scan(step, init, (k_blocks, v_blocks))
    return o / l


def blockwise_attention(q, k, v, block_size):
    n = k.shape[0] // block_size
    kb = k.reshape(n, block_size, -1)
    vb = v.reshape(n, block_size, -1)
    return jax.vmap(one_query, in_axes=(0, None, None, None))(q, kb, vb, 1.0 / jnp.sqrt(q.shape[1]))
