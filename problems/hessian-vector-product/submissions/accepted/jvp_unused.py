"""`jax.jvp` of the gradient is computed and thrown away; the product is written out by hand.

Forward-over-reverse is advice (the traced program cannot tell the ways apart); what decides is that no
D-by-D array is formed, and this program forms none.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def loss(w, x, y):
    z = x @ w
    return jnp.mean(jax.nn.softplus(z) - y * z)


def hvp(w, x, y, v):
    jax.jvp(lambda w: jax.grad(loss)(w, x, y), (w,), (v,))
    n = x.shape[0]
    p = jax.nn.sigmoid(x @ w)
    grad = x.T @ (p - y) / n
    by_hand = x.T @ (p * (1 - p) * (x @ v)) / n
    return {"grad": grad, "hvp": by_hand}
