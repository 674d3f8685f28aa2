"""The right forward-over-reverse product, plus `0 * (jax.hessian(loss)(w) @ v)`: the Hessian is formed
(so `no-dense-hessian` fails), and its product with v is a path from v around the jvp (so does
`forward-over-reverse`).

expect: requirements_not_met
fails: no-dense-hessian
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.mean(jax.nn.softplus(z) - y * z)

    g, hv = jax.jvp(jax.grad(loss), (w,), (v,))
    return {"grad": g, "hvp": hv + 0.0 * (jax.hessian(loss)(w) @ v)}
