"""Classic mistake: an asymmetric mask `(w > -1) & (w <= 1)`. The visible examples have weights at +1 but
none at exactly -1, so it passes them; the hidden cases put a weight at exactly -1, whose gradient the
statement keeps.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_vjp
    def quantize(w):
        return jnp.round(jnp.clip(w, -1.0, 1.0) * levels) / levels

    def fwd(w):
        return quantize(w), (w > -1.0) & (w <= 1.0)

    def bwd(inside, g):
        return (jnp.where(inside, g, 0.0),)

    quantize.defvjp(fwd, bwd)
    value, grad = jax.value_and_grad(lambda w: jnp.mean((x @ quantize(w) - y) ** 2))(w)
    return {"loss": value, "grad": grad}
