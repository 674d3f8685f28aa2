"""Vmap discarded next to a Python loop.

expect: requirements_not_met
fails: batched-not-looped
"""
# jax.vmap of a stable attention is computed and thrown away; the returned value comes from a Python loop
# over the examples (one copy of attention per example in the program).
import jax
import jax.numpy as jnp


def attend(q, k, v):
    return jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1) @ v


def attention(q, k, v):
    batched = jax.vmap(attend)(q, k, v)  # noqa: F841 - decorative
    return jnp.stack([attend(q[b], k[b], v[b]) for b in range(q.shape[0])])
