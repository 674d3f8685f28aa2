"""`jax.jacrev` of the scalar loss is its gradient (one backward pass, no Hessian); `jax.jvp` of it is
forward-over-reverse.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.mean(jax.nn.softplus(z) - y * z)

    g, hv = jax.jvp(jax.jacrev(loss), (w,), (v,))
    return {"grad": g, "hvp": hv}
