"""Jvp with partial.

expect: accepted
fails: none
"""
# jvp of grad with the data bound by functools.partial, and the sigmoid form of the loss.
from functools import partial

import jax
import jax.numpy as jnp


def loss(w, x, y):
    z = x @ w
    p = jax.nn.sigmoid(z)
    return -jnp.mean(y * jnp.log(p) + (1 - y) * jnp.log1p(-p))


def hvp(w, x, y, v):
    grad_fn = jax.grad(partial(loss, x=x, y=y))
    g, hv = jax.jvp(grad_fn, (w,), (v,))
    return {"grad": g, "hvp": hv}
