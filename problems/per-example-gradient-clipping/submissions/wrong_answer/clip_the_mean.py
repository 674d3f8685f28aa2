"""Clip the mean.

expect: wrong_answer
fails: batched-per-example-grads
"""
# Clips the gradient of the batch mean once, instead of each example's gradient.
import jax
import jax.numpy as jnp


def clipped_mean_grad(params, x, y, max_norm):
    def mean_loss(p):
        return jnp.mean((jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y) ** 2)

    g = jax.grad(mean_loss)(params)
    norm = jnp.sqrt(sum(jnp.sum(leaf ** 2) for leaf in jax.tree.leaves(g)))
    factor = max_norm / jnp.maximum(norm, max_norm)
    return {"grads": jax.tree.map(lambda leaf: leaf * factor, g), "norms": jnp.full(x.shape[:1], norm)}
