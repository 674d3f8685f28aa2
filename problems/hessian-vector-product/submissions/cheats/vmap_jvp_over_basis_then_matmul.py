"""`jax.vmap` of the forward-over-reverse product over the D basis vectors (the Hessian, column by column,
as `jax.jacfwd` does), then a matrix product with v.

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
    column = lambda e: jax.jvp(grad_fn, (w,), (e,))[1]
    hessian = jax.vmap(column)(jnp.eye(w.shape[0]))
    return {"grad": grad_fn(w), "hvp": hessian @ v}
