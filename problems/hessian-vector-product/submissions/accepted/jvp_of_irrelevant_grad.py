"""`jax.jvp` of the gradient of `sum(w**2)` (which is 2v, whatever the data), corrected back to zero and
added to a product written out by hand: the jvp moves the output, but the answer comes around it.

Forward-over-reverse is advice (the traced program cannot tell the ways apart); what decides is that no
D-by-D array is formed, and this program forms none.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    _, twice_v = jax.jvp(jax.grad(lambda w: jnp.sum(w ** 2)), (w,), (v,))
    n = x.shape[0]
    p = jax.nn.sigmoid(x @ w)
    grad = x.T @ (p - y) / n
    by_hand = x.T @ (p * (1 - p) * (x @ v)) / n
    return {"grad": grad, "hvp": by_hand + (twice_v - 2.0 * v)}
