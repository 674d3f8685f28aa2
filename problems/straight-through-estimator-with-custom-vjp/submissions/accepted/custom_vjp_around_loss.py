"""The `custom_vjp` wraps the whole loss (product and mean squared error); its backward rule spells out the
whole gradient, which `jax.value_and_grad` then calls.

The rows of this problem are advice (the program computes the same numbers whichever way the
straight-through gradient is written); the numbers decide, and these are right.

expect: accepted
fails: none
"""
# Right numbers, but the custom_vjp wraps the whole loss and its backward rule is the full gradient by hand.
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    def quantize(w):
        return jnp.round(jnp.clip(w, -1, 1) * levels) / levels

    @jax.custom_vjp
    def loss(w):
        return jnp.mean((x @ quantize(w) - y) ** 2)

    def fwd(w):
        return loss(w), w

    def bwd(w, g):
        err = x @ quantize(w) - y
        dq = 2.0 * x.T @ err / err.size
        return (g * dq * (jnp.abs(w) <= 1),)

    loss.defvjp(fwd, bwd)
    value, grad = jax.value_and_grad(loss)(w)
    return {"loss": value, "grad": grad}
