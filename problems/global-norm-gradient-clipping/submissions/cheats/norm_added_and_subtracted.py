"""The square-root norm added and subtracted again around a norm computed without a root.

expect: requirements_not_met
fails: one-global-norm
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    sq = sum(jnp.sum(g * g) for g in jax.tree.leaves(grads))
    root = jnp.sqrt(sq)
    other = jnp.where(sq > 0, jnp.exp(0.5 * jnp.log(jnp.where(sq > 0, sq, 1.0))), 0.0)
    norm = other + root - root
    clipped = jax.tree.map(lambda g: jnp.where(norm < max_norm, g, g / norm * max_norm), grads)
    return {"grads": clipped, "global_norm": norm}
