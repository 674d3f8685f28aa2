"""Right numbers: a scan computes each block's scores and stacks them, and the softmax is taken after it over
all of them (the (T, S) scores exist after all, as the scan's stacked output).

expect: requirements_not_met
fails: one-scan-over-key-blocks, running-max-in-carry, no-score-matrix
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size
    _, sb = jax.lax.scan(lambda c, k_j: (c, q @ k_j.T / jnp.sqrt(jnp.float32(d))), 0.0, k.reshape(n, block_size, d))
    scores = sb.transpose(1, 0, 2).reshape(T, S)
    return jax.nn.softmax(scores, axis=-1) @ v
