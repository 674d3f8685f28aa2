"""Missing mean.

expect: wrong_answer
fails: none
"""
# Sums the loss over examples instead of averaging it: both results are N times too large.
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.sum(jax.nn.softplus(z) - y * z)

    g, hv = jax.jvp(jax.grad(loss), (w,), (v,))
    return {"grad": g, "hvp": hv}
