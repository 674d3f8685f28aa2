"""The whole tree flattened with `ravel_pytree`, the flat vector clipped by its norm, and split back: right
numbers, but each clipped leaf is cut out of a vector made of every leaf.

expect: requirements_not_met
fails: one-global-norm
"""
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree


def clip_by_global_norm(grads, max_norm):
    flat, unravel = ravel_pytree(grads)
    norm = jnp.linalg.norm(flat)
    clipped = jnp.where(norm < max_norm, flat, flat / norm * max_norm)
    return {"grads": unravel(clipped), "global_norm": norm}
