"""Half the loss through the `custom_vjp` quantizer and half through the `stop_gradient` trick: the custom
quantizer contributes, but the answer is also computed by a path around it.

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
        sg = passthrough + jax.lax.stop_gradient(q - passthrough)
        return 0.5 * jnp.mean((x @ quantize(w) - y) ** 2) + 0.5 * jnp.mean((x @ sg - y) ** 2)

    value, grad = jax.value_and_grad(loss)(w)
    return {"loss": value, "grad": grad}
