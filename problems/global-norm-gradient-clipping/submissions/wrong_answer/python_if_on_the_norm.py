"""A Python `if` on the norm: under tracing the norm has no value, and JAX raises a
TracerBoolConversionError.

expect: runtime_error
fails: one-global-norm, no-host-callback
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    if norm < max_norm:
        return {"grads": grads, "global_norm": norm}
    return {"grads": jax.tree.map(lambda g: g / norm * max_norm, grads), "global_norm": norm}
