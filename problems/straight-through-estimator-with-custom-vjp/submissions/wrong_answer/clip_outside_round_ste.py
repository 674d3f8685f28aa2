"""Classic mistake: the custom VJP wraps only the rounding (backward: identity) and the weights are clipped
with `jnp.clip` outside it, so autodiff's derivative of the clip masks the gradient. That is right away from
the boundary, but at exactly |w| = 1 the derivative of `clip` (a max and a min) is 1/2, not 1: the hidden
cases put weights exactly at +-1.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_vjp
    def round_ste(v):
        return jnp.round(v)

    round_ste.defvjp(lambda v: (round_ste(v), None), lambda _, g: (g,))

    def loss(w):
        return jnp.mean((x @ (round_ste(jnp.clip(w, -1.0, 1.0) * levels) / levels) - y) ** 2)

    value, grad = jax.value_and_grad(loss)(w)
    return {"loss": value, "grad": grad}
