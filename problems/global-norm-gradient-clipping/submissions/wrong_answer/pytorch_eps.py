"""PyTorch's `clip_grad_norm_` formula, coefficient max_norm / (norm + 1e-6) capped at 1: not optax's, and
far from it when the norm itself is near 1e-6.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    coef = jnp.minimum(max_norm / (norm + 1e-6), 1.0)
    return {"grads": jax.tree.map(lambda g: g * coef, grads), "global_norm": norm}
