"""Right numbers: each query's maximum is found first, block by block in a Python loop, and the scan then sums
`exp(s - max)` with nothing to rescale; but the maximum is not carried and updated by
the scan, and every step reads that maximum, which comes from every block of keys.

expect: requirements_not_met
fails: one-scan-over-key-blocks, running-max-in-carry
"""
import jax
import jax.numpy as jnp

def _global_max(q, k, block_size):
    """Each query's largest score, found block by block in a Python loop before the scan (no big array)."""
    T, d = q.shape
    m = jnp.full((T,), -jnp.inf)
    for j in range(k.shape[0] // block_size):
        m = jnp.maximum(m, (q @ k[j * block_size:(j + 1) * block_size].T / jnp.sqrt(jnp.float32(d))).max(-1))
    return m


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size
    mg = _global_max(q, k, block_size)

    def step(carry, kv):
        l, o = carry
        k_j, v_j = kv
        p = jnp.exp(q @ k_j.T / jnp.sqrt(jnp.float32(d)) - mg[:, None])
        return (l + p.sum(-1), o + p @ v_j), None

    (l, o), _ = jax.lax.scan(step, (jnp.zeros((T,)), jnp.zeros((T, e))),
                             (k.reshape(n, block_size, d), v.reshape(n, block_size, e)))
    return o / l[:, None]
