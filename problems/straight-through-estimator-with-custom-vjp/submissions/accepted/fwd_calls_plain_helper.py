"""The decorated function and the forward rule both call a plain helper that rounds to the grid (written with
`jnp.floor(v + 0.5)`), so no equation of the decorated function itself is left once it is differentiated.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def _to_grid(w, levels):
    return jnp.floor(jnp.clip(w, -1.0, 1.0) * levels + 0.5) / levels


def ste_value_and_grad(w, x, y, levels):
    quantize = jax.custom_vjp(lambda w: _to_grid(w, levels))

    def fwd(w):
        return _to_grid(w, levels), w

    def bwd(w, g):
        return (g * (jnp.abs(w) <= 1.0).astype(g.dtype),)

    quantize.defvjp(fwd, bwd)

    def loss(w):
        r = x @ quantize(w) - y
        return jnp.vdot(r, r) / r.size

    value, grad = jax.value_and_grad(loss)(w)
    return {"loss": value, "grad": grad}
