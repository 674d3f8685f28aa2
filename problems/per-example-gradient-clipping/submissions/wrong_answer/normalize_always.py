"""Normalize always.

expect: wrong_answer
fails: none
"""
# Scales every example's gradient to length max_norm (g * C / |g|), also the short ones: wrong when a norm
# is below the threshold (max_norm = 1000), and 0 / 0 = nan for an all-zero gradient.
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    grads = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(params, x, y)
    n = x.shape[0]
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / norms
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / n, grads), "norms": norms}
