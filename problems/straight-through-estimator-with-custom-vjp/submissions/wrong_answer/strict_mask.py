"""Classic mistake: the mask `jnp.abs(w) < 1` instead of `<= 1`, so a weight at exactly +-1 loses its gradient
(the statement keeps it). The hidden cases put weights exactly at +-1.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_vjp
    def quantize(w):
        return jnp.round(jnp.clip(w, -1.0, 1.0) * levels) / levels

    quantize.defvjp(lambda w: (quantize(w), w), lambda w, g: (g * (jnp.abs(w) < 1.0),))
    value, grad = jax.value_and_grad(lambda w: jnp.mean((x @ quantize(w) - y) ** 2))(w)
    return {"loss": value, "grad": grad}
