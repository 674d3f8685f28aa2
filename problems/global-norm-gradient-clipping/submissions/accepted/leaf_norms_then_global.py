"""Per-leaf norms first (as logging code often has them), then the global norm from them,
`sqrt(sum(norm_l ** 2))`, and one factor for all leaves.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaf_norms = jax.tree.map(jnp.linalg.norm, grads)
    norm = jnp.sqrt(sum(n ** 2 for n in jax.tree.leaves(leaf_norms)))
    clipped = jax.tree.map(lambda g: jnp.where(norm >= max_norm, g * (max_norm / norm), g), grads)
    return {"grads": clipped, "global_norm": norm}
