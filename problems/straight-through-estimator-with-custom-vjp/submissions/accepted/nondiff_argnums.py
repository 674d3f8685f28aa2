"""A module-level `custom_vjp` quantizer taking `levels` through `nondiff_argnums`; the residual is `w`.

expect: accepted
fails: none
"""
# A top-level custom_vjp quantizer taking levels through nondiff_argnums; the residual is w itself.
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def quantize(w, levels):
    return jnp.round(jnp.clip(w, -1, 1) * levels) / levels


def _fwd(w, levels):
    return quantize(w, levels), w


def _bwd(levels, w, g):
    return (g * (jnp.abs(w) <= 1).astype(g.dtype),)


quantize.defvjp(_fwd, _bwd)


def ste_value_and_grad(w, x, y, levels):
    def loss(w):
        err = x @ quantize(w, levels) - y
        return jnp.sum(err * err) / err.size

    value, grad = jax.value_and_grad(loss)(w)
    return {"loss": value, "grad": grad}
