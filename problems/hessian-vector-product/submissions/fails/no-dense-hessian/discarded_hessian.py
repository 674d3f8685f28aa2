"""The right forward-over-reverse product, but `jax.hessian(loss)(w)` is also computed (and thrown away):
the D-by-D Hessian is formed all the same.

expect: requirements_not_met
fails: no-dense-hessian
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.mean(jax.nn.softplus(z) - y * z)

    jax.hessian(loss)(w)
    g, hv = jax.jvp(jax.grad(loss), (w,), (v,))
    return {"grad": g, "hvp": hv}
