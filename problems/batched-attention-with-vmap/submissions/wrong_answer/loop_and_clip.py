"""Loop and clip.

expect: wrong_answer
fails: batched-not-looped, stable-softmax
"""
# Both wrong: a Python loop over the examples, and scores clipped to +-80 instead of shifted: a row with two
# scores above 80 gets equal weights for them (the hidden cases have such rows).
import jax.numpy as jnp


def attention(q, k, v):
    outs = []
    for b in range(q.shape[0]):
        e = jnp.exp(jnp.clip(q[b] @ k[b].T / jnp.sqrt(q.shape[-1]), -80.0, 80.0))
        outs.append(e / e.sum(axis=-1, keepdims=True) @ v[b])
    return jnp.stack(outs)
