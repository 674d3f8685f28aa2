"""The clipped leaves from the global norm hidden behind `jnp.where(False, ...)`; what is returned comes
from one flattened vector.

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
    flat_norm = jnp.sqrt(jnp.sum(flat * flat))
    flat_clipped = unravel(jnp.where(flat_norm < max_norm, flat, flat / flat_norm * max_norm))
    never = jnp.isnan(norm)
    return {"grads": jax.tree.map(lambda a, b: jnp.where(never, a, b), mapped, flat_clipped), "global_norm": norm}
