"""A square-root norm is computed and returned, but the clipping uses a norm computed another way.

expect: requirements_not_met
fails: one-global-norm
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    sq = sum(jnp.sum(g * g) for g in jax.tree.leaves(grads))
    norm = jnp.sqrt(sq)
    other = jnp.exp(0.5 * jnp.log(jnp.maximum(sq, 1e-30)))
    clipped = jax.tree.map(lambda g: jnp.where(other < max_norm, g, g / other * max_norm), grads)
    return {"grads": clipped, "global_norm": norm}
