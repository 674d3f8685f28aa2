"""A `custom_vjp` (with a rounding in it) on an irrelevant function, the targets rounded to a grid so fine that
nothing changes; the quantizer itself is the `stop_gradient` trick.

The rows of this problem are advice (the program computes the same numbers whichever way the
straight-through gradient is written); the numbers decide, and these are right.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_vjp
    def snap(v):
        return jnp.round(v * 2.0 ** 20) / 2.0 ** 20

    snap.defvjp(lambda v: (snap(v), None), lambda _, g: (g,))

    def loss(w):
        passthrough = jnp.where(jnp.abs(w) <= 1.0, w, jax.lax.stop_gradient(w))
        q = jnp.round(jnp.clip(w, -1.0, 1.0) * levels) / levels
        wq = passthrough + jax.lax.stop_gradient(q - passthrough)
        return jnp.mean((x @ wq - snap(y)) ** 2)

    value, grad = jax.value_and_grad(loss)(w)
    return {"loss": value, "grad": grad}
