"""The naive "before" the insight compares with (insight.toml's [baseline]): the tree flattened into one
vector with `ravel_pytree`, clipped there, and split back. Same entry function and signature as
reference.py."""
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree


def clip_by_global_norm(grads, max_norm):
    flat, unravel = ravel_pytree(grads)
    norm = jnp.linalg.norm(flat)
    return {"grads": unravel(jnp.where(norm < max_norm, flat, flat / norm * max_norm)), "global_norm": norm}
