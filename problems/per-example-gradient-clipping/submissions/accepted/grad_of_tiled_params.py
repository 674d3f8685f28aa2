"""Grad of tiled params.

expect: accepted
fails: none
"""
# The "tiled parameters" trick: one grad of the summed losses with respect to a per-example copy of params.
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    n = x.shape[0]
    tiled = jax.tree.map(lambda p: jnp.broadcast_to(p, (n,) + p.shape), params)
    grads = jax.grad(lambda ps: jnp.sum(jax.vmap(_loss)(ps, x, y)))(tiled)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / n, grads), "norms": norms}
