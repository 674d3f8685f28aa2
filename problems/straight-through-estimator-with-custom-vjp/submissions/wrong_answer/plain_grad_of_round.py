"""Classic mistake: `jax.grad` straight through `jnp.round`, whose derivative is zero, so the gradient is all
zeros. There is no custom VJP, so rows 1 and 2 fail; row 3 holds: the (zero) gradient does come from
`jax.value_and_grad`, not from a formula written by hand.

expect: wrong_answer
fails: none
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
