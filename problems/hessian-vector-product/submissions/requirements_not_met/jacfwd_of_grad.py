"""Jacfwd of grad.

expect: requirements_not_met
fails: no-dense-hessian
"""
# Right numbers and forward-over-reverse, but jacfwd forms the whole Hessian column by column.
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.mean(jax.nn.softplus(z) - y * z)

    grad_fn = jax.grad(loss)
    g, _ = jax.jvp(grad_fn, (w,), (v,))
    return {"grad": g, "hvp": jax.jacfwd(grad_fn)(w) @ v}
