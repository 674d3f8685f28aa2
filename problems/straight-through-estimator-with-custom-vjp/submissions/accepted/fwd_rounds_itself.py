"""The forward rule computes the rounding itself instead of calling the decorated function, as many real
quantizers do; the residual is the mask.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_vjp
    def quantize(w):
        return jnp.round(jnp.clip(w, -1.0, 1.0) * levels) / levels

    def quantize_fwd(w):
        q = jnp.round(jnp.clip(w, -1.0, 1.0) * levels) / levels
        return q, jnp.abs(w) <= 1.0

    def quantize_bwd(inside, g):
        return (jnp.where(inside, g, jnp.zeros_like(g)),)

    quantize.defvjp(quantize_fwd, quantize_bwd)
    value, grad = jax.value_and_grad(lambda w: jnp.mean((x @ quantize(w) - y) ** 2))(w)
    return {"loss": value, "grad": grad}
