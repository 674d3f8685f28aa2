"""`jax.lax.cond` on the traced norm: one branch returns the tree, the other scales it.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax import lax


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(jax.tree_util.tree_reduce(lambda acc, g: acc + jnp.sum(g ** 2), grads, 0.0))
    scale = lambda tree: jax.tree.map(lambda g: g / norm * max_norm, tree)
    clipped = lax.cond(norm < max_norm, lambda tree: tree, scale, grads)
    return {"grads": clipped, "global_norm": norm}
