"""Clip inside vmap.

expect: accepted
fails: none
"""
# Gradient, norm and clipping all for one example, and the whole function vmapped.
import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree


def clipped_mean_grad(params, x, y, max_norm):
    def one(xn, yn):
        g = jax.grad(lambda p: (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2)(params)
        flat, _ = ravel_pytree(g)
        norm = jnp.linalg.norm(flat)
        factor = max_norm / jnp.maximum(norm, max_norm)
        return jax.tree.map(lambda leaf: leaf * factor, g), norm

    clipped, norms = jax.vmap(one)(x, y)
    return {"grads": jax.tree.map(lambda g: g.mean(axis=0), clipped), "norms": norms}
