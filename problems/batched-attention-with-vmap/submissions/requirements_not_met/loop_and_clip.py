"""Loop and clip.

expect: requirements_not_met
fails: batched-not-looped, stable-softmax
"""
# Right numbers, but both wrong: a Python loop over the examples and clipped instead of shifted scores.
import jax.numpy as jnp


def attention(q, k, v):
    outs = []
    for b in range(q.shape[0]):
        e = jnp.exp(jnp.clip(q[b] @ k[b].T / jnp.sqrt(q.shape[-1]), -80.0, 80.0))
        outs.append(e / e.sum(axis=-1, keepdims=True) @ v[b])
    return jnp.stack(outs)
