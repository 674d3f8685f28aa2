"""jvp of grad with the data bound by functools.partial (keyword arguments), softplus written with
`jnp.logaddexp`.

expect: accepted
fails: none
"""
from functools import partial

import jax
import jax.numpy as jnp


def loss(w, x, y):
    z = x @ w
    return jnp.mean(jnp.logaddexp(0.0, z) - y * z)


def hvp(w, x, y, v):
    grad_fn = jax.grad(partial(loss, x=x, y=y))
    g, hv = jax.jvp(grad_fn, (w,), (v,))
    return {"grad": g, "hvp": hv}
