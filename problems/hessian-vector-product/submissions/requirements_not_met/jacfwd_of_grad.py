"""`jax.jacfwd` of the gradient pushes all D basis vectors forward (the Hessian, one column each), then a
matrix product with v; the jvp with v next to it is thrown away.

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
    g, _ = jax.jvp(grad_fn, (w,), (v,))
    return {"grad": g, "hvp": jax.jacfwd(grad_fn)(w) @ v}
