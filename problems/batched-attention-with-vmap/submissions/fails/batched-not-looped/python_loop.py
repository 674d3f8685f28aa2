"""Python loop.

expect: requirements_not_met
fails: batched-not-looped
"""
# Right numbers, but a Python loop over the examples: one copy of attention per example in the program.
import jax
import jax.numpy as jnp


def attention(q, k, v):
    outs = []
    for b in range(q.shape[0]):
        s = q[b] @ k[b].T / jnp.sqrt(q.shape[-1])
        outs.append(jax.nn.softmax(s, axis=-1) @ v[b])
    return jnp.stack(outs)
