"""The norm of one concatenated vector with `jnp.linalg.norm` (a common way to write it); the clipping
itself is a factor mapped over the leaves.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    flat = jnp.concatenate([jnp.ravel(g) for g in jax.tree.leaves(grads)])
    norm = jnp.linalg.norm(flat)
    clipped = jax.tree.map(lambda g: jnp.where(norm < max_norm, g, g / norm * max_norm), grads)
    return {"grads": clipped, "global_norm": norm}
