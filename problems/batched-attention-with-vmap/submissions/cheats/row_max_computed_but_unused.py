"""Row max computed but unused.

expect: requirements_not_met
fails: stable-softmax
"""
# Each row's maximum of the scores is computed (a `reduce_max` of the right array along the right axis) but
# not used; the value subtracted before exp is the maximum of the clipped scores instead.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    row_max = jax.lax.stop_gradient(s.max(axis=-1, keepdims=True))  # noqa: F841 - decorative
    e = jnp.exp(s - jnp.clip(s, -80.0, 80.0).max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
