"""Flax style scaled query.

expect: accepted
fails: none
"""
# In the style of flax.linen's dot_product_attention_weights: the query is scaled before the product,
# `...qd,...kd->...qk` einsums, jax.nn.softmax in float32, and the weights applied with another einsum;
# functools.partial fixes the options and jax.vmap maps a module-like callable over the batch.
import functools

import jax
import jax.numpy as jnp


def dot_product_attention_weights(query, key, dtype=jnp.float32):
    depth = query.shape[-1]
    query = query / jnp.sqrt(depth).astype(dtype)
    attn_weights = jnp.einsum("...qd,...kd->...qk", query, key)
    return jax.nn.softmax(attn_weights.astype(jnp.float32), axis=-1).astype(dtype)


class Attention:
    def __init__(self, dtype=jnp.float32):
        self.weights_fn = functools.partial(dot_product_attention_weights, dtype=dtype)

    def __call__(self, query, key, value):
        return jnp.einsum("...qk,...kd->...qd", self.weights_fn(query, key), value)


def attention(q, k, v):
    return jax.vmap(Attention())(q, k, v)
