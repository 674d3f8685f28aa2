"""One factor `min(1, max_norm / norm)` for every leaf; with zero gradients `max_norm / 0` is inf and the
minimum picks 1, so nothing is NaN.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.vdot(g, g) for g in jax.tree.leaves(grads)))
    factor = jnp.minimum(1.0, max_norm / norm)
    return {"grads": jax.tree.map(lambda g: g * factor, grads), "global_norm": norm}
