"""Forward-over-reverse of the summed loss, divided by N afterwards (the Hessian of a mean is that of the
sum over N).

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def total(w):
        z = x @ w
        return jnp.sum(jax.nn.softplus(z) - y * z)

    n = x.shape[0]
    g, hv = jax.jvp(jax.grad(total), (w,), (v,))
    return {"grad": g / n, "hvp": hv / n}
