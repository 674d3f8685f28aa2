"""The reported norm is the norm after clipping, min(norm, max_norm), not the one before.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    clipped = jax.tree.map(lambda g: jnp.where(norm < max_norm, g, g / norm * max_norm), grads)
    return {"grads": clipped, "global_norm": jnp.minimum(norm, max_norm)}
