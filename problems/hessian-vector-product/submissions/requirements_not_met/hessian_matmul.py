"""`jax.hessian` (jacfwd of jacrev) builds all D*D entries, then a matrix product with v: the product is not
taken forward-over-reverse either.

expect: requirements_not_met
fails: no-dense-hessian
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.mean(jax.nn.softplus(z) - y * z)

    return {"grad": jax.grad(loss)(w), "hvp": jax.hessian(loss)(w) @ v}
