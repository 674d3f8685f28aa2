"""Accepted, in the style of a Flax attention module (flax is not installed here): a dataclass holding the
block size whose `__call__` runs the scan, with a `jax.jit`-ed entry and `static_argnums`.

expect: accepted
fails: none
"""
import dataclasses
from functools import partial

import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class BlockwiseAttention:
    block_size: int

    def __call__(self, query, key, value):
        depth = query.shape[-1]
        query = query / jnp.sqrt(depth).astype(query.dtype)
        n = key.shape[0] // self.block_size
        blocks = (key.reshape(n, self.block_size, depth), value.reshape(n, self.block_size, value.shape[-1]))

        def scan_fn(carry, block):
            running_max, denom, numer = carry
            kb, vb = block
            logits = query @ kb.T
            block_max = jax.lax.stop_gradient(logits.max(axis=-1))
            new_max = jnp.maximum(running_max, block_max)
            exp_logits = jnp.exp(logits - new_max[:, None])
            factor = jnp.exp(running_max - new_max)
            return (new_max, denom * factor + exp_logits.sum(-1), numer * factor[:, None] + exp_logits @ vb), None

        init = (jnp.full(query.shape[:1], -jnp.inf), jnp.zeros(query.shape[:1]),
                jnp.zeros(query.shape[:1] + value.shape[-1:]))
        (_, denom, numer), _ = jax.lax.scan(scan_fn, init, blocks)
        return numer / denom[:, None]


@partial(jax.jit, static_argnums=3)
def blockwise_attention(q, k, v, block_size):
    return BlockwiseAttention(block_size)(q, k, v)
