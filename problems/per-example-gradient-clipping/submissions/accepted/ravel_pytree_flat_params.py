"""ravel_pytree, flat params.

expect: accepted
fails: none
"""
# The parameters are flattened to one vector with ravel_pytree; the gradient of one example's loss with
# respect to that vector is vmapped, so every per-example gradient is a row of a (B, P) matrix whose row
# norms are the global norms, and the clipped mean is unravelled back into the pytree.
import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree


def clipped_mean_grad(params, x, y, max_norm):
    flat, unravel = ravel_pytree(params)

    def loss(theta, xn, yn):
        p = unravel(theta)
        return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2

    rows = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(flat, x, y)
    norms = jnp.sqrt(jnp.sum(rows * rows, axis=1))
    clipped = rows * (max_norm / jnp.maximum(norms, max_norm))[:, None]
    return {"grads": unravel(clipped.mean(axis=0)), "norms": norms}
