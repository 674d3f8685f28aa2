"""Always scaled by max_norm / norm: small gradients are stretched up to max_norm, and zero gradients
become NaN.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    return {"grads": jax.tree.map(lambda g: g * (max_norm / norm), grads), "global_norm": norm}
