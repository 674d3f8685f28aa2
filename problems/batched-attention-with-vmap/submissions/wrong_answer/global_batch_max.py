"""Global batch max.

expect: wrong_answer
fails: stable-softmax
"""
# Hand-batched, subtracting one maximum over the whole batch: rows of examples whose scores are far below
# the batch's largest underflow to 0 / 0 = nan.
import jax.numpy as jnp


def attention(q, k, v):
    s = jnp.einsum("btd,bsd->bts", q, k) / jnp.sqrt(q.shape[-1])
    e = jnp.exp(s - jnp.max(s))
    return jnp.einsum("bts,bse->bte", e / e.sum(axis=-1, keepdims=True), v)
