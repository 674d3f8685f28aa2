"""Elementwise products, no matmul.

expect: accepted
fails: none
"""
# vmap of grad over a loss written with broadcasting products and sums instead of matrix products: the
# backward pass broadcasts the unbatched weights against each example, which is still one batched pass.
import jax
import jax.numpy as jnp


def loss(p, xn, yn):
    hidden = jnp.tanh(jnp.sum(xn[:, None] * p["w1"], axis=0) + p["b1"])
    return (jnp.sum(hidden * p["w2"]) + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    grads = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(params, x, y)
    leaves = jax.tree.leaves(grads)
    norms = jnp.sqrt(sum(jnp.sum(jnp.square(g), axis=tuple(range(1, g.ndim))) for g in leaves))
    scale = jnp.minimum(1.0, max_norm / jnp.where(norms > 0, norms, 1.0))
    clipped = jax.tree.map(lambda g: jnp.mean(g * jnp.expand_dims(scale, tuple(range(1, g.ndim))), axis=0), grads)
    return {"grads": clipped, "norms": norms}
