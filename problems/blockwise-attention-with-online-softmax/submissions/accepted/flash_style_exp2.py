"""Accepted, written the way FlashAttention kernels are: exponentials in base 2 (`exp2`) with the scale and
log2(e) folded into the scores, and the running maximum initialised to a large negative finite number.

expect: accepted
fails: none
"""
import math

import jax
import jax.numpy as jnp

LOG2E = math.log2(math.e)
NEG_INF = -1e30


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    qs = q * (LOG2E / math.sqrt(d))

    def step(carry, j):
        row_max, row_sum, acc = carry
        kj = jax.lax.dynamic_slice(k, (j * block_size, 0), (block_size, d))
        vj = jax.lax.dynamic_slice(v, (j * block_size, 0), (block_size, e))
        scores = jax.lax.dot_general(qs, kj, (((1,), (1,)), ((), ())))
        new_max = jnp.maximum(row_max, scores.max(axis=1))
        probs = jnp.exp2(scores - new_max[:, None])
        rescale = jnp.exp2(row_max - new_max)
        row_sum = rescale * row_sum + probs.sum(axis=1)
        acc = rescale[:, None] * acc + jax.lax.dot_general(probs, vj, (((1,), (0,)), ((), ())))
        return (new_max, row_sum, acc), None

    init = (jnp.full((T,), NEG_INF, jnp.float32), jnp.zeros((T,), jnp.float32), jnp.zeros((T, e), jnp.float32))
    (_, row_sum, acc), _ = jax.lax.scan(step, init, jnp.arange(S // block_size))
    return acc / row_sum[:, None]
