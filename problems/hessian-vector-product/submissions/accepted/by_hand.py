"""By hand.

Forward-over-reverse is advice (the traced program cannot tell the ways apart); what decides is that no
D-by-D array is formed, and this program forms none.

expect: accepted
fails: none
"""
# Right numbers from the formulas, X^T (s * (X v)) / N, with no autodiff at all.
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    n = x.shape[0]
    p = jax.nn.sigmoid(x @ w)
    grad = x.T @ (p - y) / n
    return {"grad": grad, "hvp": x.T @ (p * (1 - p) * (x @ v)) / n}
