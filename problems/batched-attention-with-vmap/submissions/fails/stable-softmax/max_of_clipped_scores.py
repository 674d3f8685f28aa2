"""Max of clipped scores.

expect: requirements_not_met
fails: stable-softmax
"""
# Right numbers for scores within +-150, but the value subtracted before exp is the row maximum of the
# scores clipped to +-80, not of the scores themselves: with scores up to 1000 it would overflow again.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    e = jnp.exp(s - jnp.max(jnp.clip(s, -80.0, 80.0), axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
