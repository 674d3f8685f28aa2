"""A `custom_vjp` quantizer computes the loss, but the gradient is written out by hand and no autodiff runs.

The rows of this problem are advice (the program computes the same numbers whichever way the
straight-through gradient is written); the numbers decide, and these are right.

expect: accepted
fails: none
"""
# Right numbers: a custom_vjp quantizer for the forward pass, but the gradient is written out by hand.
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_vjp
    def quantize(w):
        return jnp.round(jnp.clip(w, -1, 1) * levels) / levels

    quantize.defvjp(lambda w: (quantize(w), w), lambda w, g: (g * (jnp.abs(w) <= 1),))
    err = x @ quantize(w) - y
    grad = 2.0 * x.T @ err / err.size * (jnp.abs(w) <= 1)
    return {"loss": jnp.mean(err ** 2), "grad": grad}
