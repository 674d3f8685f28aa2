"""Accepted: the scan body wrapped in `jax.checkpoint` with a policy alias (as flax's `nn.remat` and maxtext's
remat policies wrap a layer), the blocks taken with `jnp.take` of the block index, and a jitted entry with
`functools.partial` and a static block size.

expect: accepted
fails: none
"""
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="block_size")
def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    e = v.shape[1]
    kb = k.reshape(-1, block_size, d)
    vb = v.reshape(-1, block_size, e)

    @partial(jax.checkpoint, policy=jax.checkpoint_policies.nothing_saveable)
    def step(carry, j):
        m, l, o = carry
        k_j = jnp.take(kb, j, axis=0)
        v_j = jnp.take(vb, j, axis=0)
        s = jnp.dot(q, k_j.T) * jax.lax.rsqrt(jnp.float32(d))
        m_new = jnp.maximum(m, jnp.max(s, axis=1))
        p = jnp.exp(s - m_new[:, None])
        alpha = jnp.exp(m - m_new)
        return (m_new, alpha * l + p.sum(1), alpha[:, None] * o + jnp.dot(p, v_j)), None

    init = (jnp.full((T,), -jnp.inf), jnp.zeros((T,)), jnp.zeros((T, e)))
    (_, l, o), _ = jax.lax.scan(step, init, jnp.arange(kb.shape[0]))
    return o / l[:, None]
