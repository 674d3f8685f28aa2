"""Classic mistake: the backward rule passes the gradient straight through (no mask), and the weights are
clipped before they enter the quantizer, so the clipped weights still receive a gradient.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_vjp
    def quantize(w):
        return jnp.round(w * levels) / levels

    quantize.defvjp(lambda w: (quantize(w), None), lambda _, g: (g,))
    clipped = jnp.clip(w, -1.0, 1.0)
    value, grad = jax.value_and_grad(lambda v: jnp.mean((x @ quantize(v) - y) ** 2))(clipped)
    return {"loss": value, "grad": grad}
