"""A `custom_vjp` quantizer is called, but its output is thrown away; the answer comes from the
`stop_gradient` trick beside it.

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
        _ = quantize(w)
        passthrough = jnp.where(jnp.abs(w) <= 1.0, w, jax.lax.stop_gradient(w))
        q = jnp.round(jnp.clip(w, -1.0, 1.0) * levels) / levels
        return jnp.mean((x @ (passthrough + jax.lax.stop_gradient(q - passthrough)) - y) ** 2)

    value, grad = jax.value_and_grad(loss)(w)
    return {"loss": value, "grad": grad}
