"""The right forward-over-reverse product, and the Hessian's trace printed for monitoring with
`jax.debug.print`: `jax.jacfwd` of the gradient forms all D*D entries to get it.

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
    jax.debug.print("trace of H: {}", jnp.trace(jax.jacfwd(grad_fn)(w)))
    g, hv = jax.jvp(grad_fn, (w,), (v,))
    return {"grad": g, "hvp": hv}
