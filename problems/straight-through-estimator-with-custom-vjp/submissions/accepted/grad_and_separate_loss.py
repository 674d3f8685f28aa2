"""`jax.grad` for the gradient and the loss computed again outside it; the mask saved as a float residual.

expect: accepted
fails: none
"""
# jax.grad for the gradient, the loss computed again separately; the mask saved as a float residual.
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_vjp
    def q(w):
        return jnp.round(jnp.clip(w, -1.0, 1.0) * levels) / levels

    q.defvjp(lambda w: (q(w), jnp.where(jnp.abs(w) > 1.0, 0.0, 1.0)), lambda m, g: (g * m,))

    def loss(w):
        return ((x @ q(w) - y) ** 2).mean()

    return {"loss": loss(w), "grad": jax.grad(loss)(w)}
