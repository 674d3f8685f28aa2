"""Norms by lax.map.

expect: requirements_not_met
fails: batched-per-example-grads
"""
# Right numbers and one batched backward pass, but the per-example norms are computed by `lax.map`, one
# example per step: the requirement forbids a loop over the examples for `norms` as for `grads`.
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def _norm(g):
    return jnp.sqrt(sum(jnp.sum(leaf ** 2) for leaf in jax.tree.leaves(g)))


def clipped_mean_grad(params, x, y, max_norm):
    grads = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(params, x, y)
    norms = jax.lax.map(_norm, grads)
    factor = max_norm / jnp.maximum(norms, max_norm)
    n = x.shape[0]
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / n, grads), "norms": norms}
