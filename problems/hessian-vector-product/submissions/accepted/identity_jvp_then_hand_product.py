"""`jax.jvp` of the gradient of `0.5 * sum(w**2)` returns v itself; the Hessian is then applied to it by
hand. Only v flows through the forward-over-reverse pass; the data reach the answer around it.

Forward-over-reverse is advice (the traced program cannot tell the ways apart); what decides is that no
D-by-D array is formed, and this program forms none.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    _, same_v = jax.jvp(jax.grad(lambda w: 0.5 * jnp.sum(w ** 2)), (w,), (v,))
    n = x.shape[0]
    p = jax.nn.sigmoid(x @ w)
    return {"grad": x.T @ (p - y) / n, "hvp": x.T @ (p * (1 - p) * (x @ same_v)) / n}
