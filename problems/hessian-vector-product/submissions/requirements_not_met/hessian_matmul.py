"""Hessian matmul.

expect: requirements_not_met
fails: no-dense-hessian
"""
# Right numbers, but jax.hessian builds all D*D entries before the product.
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.mean(jax.nn.softplus(z) - y * z)

    return {"grad": jax.grad(loss)(w), "hvp": jax.hessian(loss)(w) @ v}
