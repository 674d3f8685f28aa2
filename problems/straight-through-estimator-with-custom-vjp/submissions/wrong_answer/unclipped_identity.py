"""Classic mistake: the backward rule is the plain identity, so clipped weights (|w| > 1) get a gradient too.

expect: wrong_answer
fails: none
"""
# A custom_vjp whose backward pass is the plain identity: clipped weights wrongly get a gradient.
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_vjp
    def q(w):
        return jnp.round(jnp.clip(w, -1, 1) * levels) / levels

    q.defvjp(lambda w: (q(w), None), lambda _, g: (g,))
    value, grad = jax.value_and_grad(lambda w: jnp.mean((x @ q(w) - y) ** 2))(w)
    return {"loss": value, "grad": grad}
