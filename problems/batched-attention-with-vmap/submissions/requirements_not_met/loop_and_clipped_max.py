"""Loop and clipped max.

expect: requirements_not_met
fails: batched-not-looped, stable-softmax
"""
# Right numbers, but both wrong: a Python loop over the examples, and the maximum subtracted is that of the
# clipped scores, not of the scores.
import jax.numpy as jnp


def attention(q, k, v):
    outs = []
    for b in range(q.shape[0]):
        s = q[b] @ k[b].T / jnp.sqrt(q.shape[-1])
        e = jnp.exp(s - jnp.clip(s, -80.0, 80.0).max(axis=-1, keepdims=True))
        outs.append(e / e.sum(axis=-1, keepdims=True) @ v[b])
    return jnp.stack(outs)
