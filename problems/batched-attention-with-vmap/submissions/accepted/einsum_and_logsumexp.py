"""Batched attention written with einsum and logsumexp, no vmap.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def attention(q, k, v):
    scores = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(jnp.float32(q.shape[-1]))
    weights = jnp.exp(scores - jax.nn.logsumexp(scores, axis=-1, keepdims=True))
    return jnp.einsum("bqk,bkd->bqd", weights, v)
