"""Linearize.

expect: accepted
fails: none
"""
# jax.linearize of the gradient function gives the forward-mode derivative as a reusable linear map.
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.mean(jnp.logaddexp(0.0, z) - y * z)

    grad, hessian_times = jax.linearize(jax.grad(loss), w)
    return {"grad": grad, "hvp": hessian_times(v)}
