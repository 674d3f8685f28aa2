"""Fori loop over examples.

expect: requirements_not_met
fails: batched-not-looped
"""
# Right numbers, but lax.fori_loop walks the examples, cutting q[b], k[b], v[b] with dynamic_slice.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    return jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1) @ v


def attention(q, k, v):
    def body(b, out):
        return out.at[b].set(attend(q[b], k[b], v[b]))

    return jax.lax.fori_loop(0, q.shape[0], body, jnp.zeros(q.shape[:2] + v.shape[2:], q.dtype))
