import jax
import jax.numpy as jnp


def _attend(q, k, v):
    scores = q @ k.T / jnp.sqrt(jnp.float32(q.shape[-1]))
    scores = scores - jnp.max(scores, axis=-1, keepdims=True)
    weights = jnp.exp(scores)
    weights = weights / jnp.sum(weights, axis=-1, keepdims=True)
    return weights @ v


def attention(q, k, v):
    return jax.vmap(_attend)(q, k, v)
