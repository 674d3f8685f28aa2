"""Explicit hessian by hand.

expect: requirements_not_met
fails: no-dense-hessian
"""
# Right numbers, but the Hessian is written out and materialised: X^T diag(s) X / N, then times v.
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    n = x.shape[0]
    p = jax.nn.sigmoid(x @ w)
    hessian = (x.T * (p * (1 - p))) @ x / n
    return {"grad": x.T @ (p - y) / n, "hvp": hessian @ v}
