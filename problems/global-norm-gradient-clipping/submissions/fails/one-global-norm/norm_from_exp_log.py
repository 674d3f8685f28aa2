"""The global norm without a square root, as exp(log(sum of squares) / 2): right to rounding, but not the
square root the requirement names.

expect: requirements_not_met
fails: one-global-norm
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    sq = sum(jnp.sum(g * g) for g in jax.tree.leaves(grads))
    norm = jnp.where(sq > 0, jnp.exp(0.5 * jnp.log(jnp.where(sq > 0, sq, 1.0))), 0.0)
    clipped = jax.tree.map(lambda g: jnp.where(norm < max_norm, g, g / norm * max_norm), grads)
    return {"grads": clipped, "global_norm": norm}
