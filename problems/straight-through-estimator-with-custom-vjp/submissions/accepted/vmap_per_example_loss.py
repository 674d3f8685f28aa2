"""The loss built with `jax.vmap` over examples inside the differentiated function; the quantized weights are
computed once, outside the vmap.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_vjp
    def quantize(w):
        return jnp.round(levels * jnp.clip(w, -1.0, 1.0)) / levels

    def fwd(w):
        return quantize(w), w

    def bwd(w, g):
        return (jnp.where((w >= -1.0) & (w <= 1.0), g, 0.0),)

    quantize.defvjp(fwd, bwd)

    def loss(w):
        wq = quantize(w)
        per_example = jax.vmap(lambda xi, yi: jnp.mean((xi @ wq - yi) ** 2))(x, y)
        return jnp.mean(per_example)

    value, grad = jax.value_and_grad(loss)(w)
    return {"loss": value, "grad": grad}
