"""Plain grad of round.

expect: wrong_answer
fails: custom-vjp, grad-by-autodiff
"""
# jax.grad straight through jnp.round: its derivative is zero, so the gradient is all zeros.
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    def loss(w):
        q = jnp.round(jnp.clip(w, -1, 1) * levels) / levels
        return jnp.mean((x @ q - y) ** 2)

    value, grad = jax.value_and_grad(loss)(w)
    return {"loss": value, "grad": grad}
