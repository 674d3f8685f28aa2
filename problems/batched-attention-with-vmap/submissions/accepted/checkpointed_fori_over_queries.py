"""Checkpointed fori over queries.

expect: accepted
fails: none
"""
# A jax.checkpoint-ed attention for one example that fills its output one query row at a time with
# lax.fori_loop and dynamic_update_slice, the row softmax written with logsumexp; vmapped over the batch.
import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp


@jax.checkpoint
def attend(q, k, v):
    scale = q.shape[-1] ** -0.5

    def row(t, out):
        q_t = jax.lax.dynamic_slice_in_dim(q, t, 1, axis=0)
        s = (q_t @ k.T) * scale
        p = jnp.exp(s - logsumexp(s, axis=-1, keepdims=True))
        return jax.lax.dynamic_update_slice_in_dim(out, p @ v, t, axis=0)

    return jax.lax.fori_loop(0, q.shape[0], row, jnp.zeros((q.shape[0], v.shape[-1]), v.dtype))


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
