"""Hand batched einsum.

expect: accepted
fails: none
"""
# Batched by hand with einsum, with the max subtracted under stop_gradient.
import jax
import jax.numpy as jnp


def attention(q, k, v):
    scores = jnp.einsum("btd,bsd->bts", q, k) * (q.shape[-1] ** -0.5)
    scores = scores - jax.lax.stop_gradient(scores.max(axis=-1, keepdims=True))
    weights = jnp.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return jnp.einsum("bts,bse->bte", weights, v)
