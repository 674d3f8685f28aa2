"""Zero times the square-root norm added to a norm computed another way: the root is there, and does
nothing.

expect: requirements_not_met
fails: one-global-norm
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    sq = sum(jnp.sum(g * g) for g in jax.tree.leaves(grads))
    other = jnp.exp(0.5 * jnp.log(jnp.maximum(sq, 1e-30)))
    norm = other + 0.0 * jnp.sqrt(sq)
    clipped = jax.tree.map(lambda g: jnp.where(norm < max_norm, g, g / norm * max_norm), grads)
    return {"grads": clipped, "global_norm": jnp.where(sq > 0, norm, 0.0)}
