"""A `custom_vjp` on the quantizer alone, but its backward rule ignores the cotangent autodiff hands it and
computes the whole gradient from `x` and `y` by hand: JAX derives nothing of the product or the loss.

The rows of this problem are advice (the program computes the same numbers whichever way the
straight-through gradient is written); the numbers decide, and these are right.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_vjp
    def quantize(w):
        return jnp.round(jnp.clip(w, -1.0, 1.0) * levels) / levels

    def bwd(w, g):
        err = x @ quantize(w) - y
        return (2.0 * x.T @ err / err.size * (jnp.abs(w) <= 1.0),)

    quantize.defvjp(lambda w: (quantize(w), w), bwd)
    value, grad = jax.value_and_grad(lambda w: jnp.mean((x @ quantize(w) - y) ** 2))(w)
    return {"loss": value, "grad": grad}
