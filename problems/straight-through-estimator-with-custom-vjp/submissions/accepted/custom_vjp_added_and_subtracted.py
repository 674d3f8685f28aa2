"""The `custom_vjp` quantizer's output added and subtracted again around the `stop_gradient` quantizer's: the
gradient is JAX's autodiff of the `stop_gradient` trick (grad-by-autodiff holds), and the custom VJP's rule
carries none of it.

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

    quantize.defvjp(lambda w: (quantize(w), w), lambda w, g: (g * (jnp.abs(w) <= 1.0),))

    def loss(w):
        passthrough = jnp.where(jnp.abs(w) <= 1.0, w, jax.lax.stop_gradient(w))
        q = jnp.round(jnp.clip(w, -1.0, 1.0) * levels) / levels
        c = quantize(w)
        wq = c + (passthrough + jax.lax.stop_gradient(q - passthrough)) - c
        return jnp.mean((x @ wq - y) ** 2)

    value, grad = jax.value_and_grad(loss)(w)
    return {"loss": value, "grad": grad}
