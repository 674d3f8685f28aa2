"""Half the tree-mapped clip plus half the flat-vector clip: the norm contributes, and the answer is also
computed around it.

expect: requirements_not_met
fails: one-global-norm
"""
import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    mapped = jax.tree.map(lambda g: jnp.where(norm < max_norm, g, g / norm * max_norm), grads)
    flat, unravel = ravel_pytree(grads)
    flat_clipped = unravel(flat * jnp.minimum(1.0, max_norm / jnp.sqrt(jnp.sum(flat * flat))))
    return {"grads": jax.tree.map(lambda a, b: 0.5 * a + 0.5 * b, mapped, flat_clipped), "global_norm": norm}
