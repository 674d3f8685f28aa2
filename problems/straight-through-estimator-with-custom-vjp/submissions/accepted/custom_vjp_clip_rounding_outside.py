"""The `custom_vjp` wraps only the clipping (forward: clip; backward: the mask), and the rounding is done
outside it with the `stop_gradient` trick: the numbers are right, the custom VJP holds nothing but part of the
quantizer (row 2) and its backward rule gives the gradient through `jax.value_and_grad` (row 3), but the
rounding is not in its forward function (row 1).

The rows of this problem are advice (the program computes the same numbers whichever way the
straight-through gradient is written); the numbers decide, and these are right.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_vjp
    def clip(w):
        return jnp.clip(w, -1.0, 1.0)

    clip.defvjp(lambda w: (clip(w), jnp.abs(w) <= 1.0), lambda inside, g: (jnp.where(inside, g, 0.0),))

    def loss(w):
        c = clip(w)
        wq = c + jax.lax.stop_gradient(jnp.round(c * levels) / levels - c)
        return jnp.mean((x @ wq - y) ** 2)

    value, grad = jax.value_and_grad(loss)(w)
    return {"loss": value, "grad": grad}
