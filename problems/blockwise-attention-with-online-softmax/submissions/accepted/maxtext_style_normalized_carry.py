"""Accepted, maxtext-style: the carry is a dict, the output is kept normalised at every step (each step
rescales it by the old sum over the new one), and a `jnp.where` guards the first step's -inf maximum.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp


def _step(carry, kv, *, q, scale):
    k_blk, v_blk = kv
    logits = jnp.einsum("td,kd->tk", q, k_blk) * scale
    m_new = jnp.maximum(carry["max"], jnp.max(logits, axis=-1))
    correction = jnp.where(jnp.isneginf(carry["max"]), 0.0, jnp.exp(carry["max"] - m_new))
    weights = jnp.exp(logits - m_new[:, None])
    l_old = carry["sum"] * correction
    l_new = l_old + jnp.sum(weights, axis=-1)
    out = (carry["out"] * l_old[:, None] + weights @ v_blk) / l_new[:, None]
    return {"max": m_new, "sum": l_new, "out": out}, None


def blockwise_attention(q, k, v, block_size):
    num_blocks = k.shape[0] // block_size
    carry = {"max": jnp.full(q.shape[:1], -jnp.inf, jnp.float32), "sum": jnp.zeros(q.shape[:1], jnp.float32),
             "out": jnp.zeros((q.shape[0], v.shape[1]), jnp.float32)}
    xs = (k.reshape(num_blocks, block_size, k.shape[1]), v.reshape(num_blocks, block_size, v.shape[1]))
    carry, _ = jax.lax.scan(functools.partial(_step, q=q, scale=q.shape[1] ** -0.5), carry, xs)
    return carry["out"]
