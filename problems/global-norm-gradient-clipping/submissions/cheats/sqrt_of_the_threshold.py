"""A square root of something irrelevant (the threshold, via sqrt(max_norm) ** 2) next to a norm
computed without one.

expect: requirements_not_met
fails: one-global-norm
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    c = jnp.sqrt(max_norm) ** 2
    sq = sum(jnp.sum(g * g) for g in jax.tree.leaves(grads))
    norm = jnp.where(sq > 0, jnp.exp(0.5 * jnp.log(jnp.where(sq > 0, sq, 1.0))), 0.0)
    clipped = jax.tree.map(lambda g: jnp.where(norm < c, g, g / norm * c), grads)
    return {"grads": clipped, "global_norm": norm}
