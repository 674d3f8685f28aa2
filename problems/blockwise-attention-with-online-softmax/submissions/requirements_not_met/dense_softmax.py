"""Right numbers the ordinary way: `jax.nn.softmax` over the full (T, S) score matrix.

expect: requirements_not_met
fails: one-scan-over-key-blocks, running-max-in-carry, no-score-matrix
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    return jax.nn.softmax(q @ k.T / jnp.sqrt(jnp.float32(q.shape[1])), axis=-1) @ v
