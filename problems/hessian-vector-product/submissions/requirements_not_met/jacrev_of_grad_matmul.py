"""`jax.jacrev` of the gradient pulls all D basis vectors back (the Hessian, one row each:
reverse-over-reverse), then a matrix product with v.

expect: requirements_not_met
fails: no-dense-hessian
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.mean(jax.nn.softplus(z) - y * z)

    grad_fn = jax.grad(loss)
    return {"grad": grad_fn(w), "hvp": jax.jacrev(grad_fn)(w) @ v}
