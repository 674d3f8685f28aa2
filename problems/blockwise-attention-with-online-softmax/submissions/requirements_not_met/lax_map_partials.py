"""Right numbers: `lax.map` computes every block's local maximum, sum and output (stacked), and they are merged
after it; nothing is carried from block to block, and the stacked partial results hold more than one block.

expect: requirements_not_met
fails: one-scan-over-key-blocks, running-max-in-carry, no-score-matrix
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size

    def part(kv):
        k_j, v_j = kv
        s = q @ k_j.T / jnp.sqrt(jnp.float32(d))
        mx = s.max(-1)
        p = jnp.exp(s - mx[:, None])
        return mx, p.sum(-1), p @ v_j

    mx, ls, os_ = jax.lax.map(part, (k.reshape(n, block_size, d), v.reshape(n, block_size, e)))
    m = mx.max(0)
    w = jnp.exp(mx - m)
    return (w[:, :, None] * os_).sum(0) / (w * ls).sum(0)[:, None]
