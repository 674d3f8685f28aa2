"""Vmap of an irrelevant function plus a loop.

expect: requirements_not_met
fails: batched-not-looped
"""
# jax.vmap is applied to something that is not attention (a row-wise softmax of v, added with weight 0),
# while attention itself runs in a lax.fori_loop over the examples that writes one example per step.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    return jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1) @ v


def attention(q, k, v):
    def one(b, out):
        return out.at[b].set(attend(q[b], k[b], v[b]))

    out = jax.lax.fori_loop(0, q.shape[0], one, jnp.zeros(q.shape[:2] + v.shape[2:], v.dtype))
    irrelevant = jax.vmap(lambda vb: jax.nn.softmax(vb, axis=-1))(v)
    return out + 0.0 * irrelevant.sum()
