"""The norm is computed in JAX, but whether to clip is decided in Python on the host, through
`jax.pure_callback` running an ordinary `if`.

expect: requirements_not_met
fails: no-host-callback
"""
import jax
import jax.numpy as jnp
import numpy as np


def _decide(norm, max_norm):
    if norm < max_norm:
        return np.asarray(True)
    return np.asarray(False)


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    keep = jax.pure_callback(_decide, jax.ShapeDtypeStruct((), jnp.bool_), norm, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.where(keep, g, g / norm * max_norm), grads), "global_norm": norm}
