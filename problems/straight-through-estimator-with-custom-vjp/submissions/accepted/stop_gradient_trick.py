"""Right numbers with the `stop_gradient` trick: no custom VJP (rows 1 and 2), and no backward rule for
`jax.value_and_grad` to call (row 3).

The rows of this problem are advice (the program computes the same numbers whichever way the
straight-through gradient is written); the numbers decide, and these are right.

expect: accepted
fails: none
"""
# Right numbers with the stop_gradient trick: identity where |w| <= 1, rounding hidden from autodiff.
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    def loss(w):
        passthrough = jnp.where(jnp.abs(w) <= 1, w, jax.lax.stop_gradient(w))
        q = jnp.round(jnp.clip(w, -1, 1) * levels) / levels
        w_q = passthrough + jax.lax.stop_gradient(q - passthrough)
        return jnp.mean((x @ w_q - y) ** 2)

    value, grad = jax.value_and_grad(loss)(w)
    return {"loss": value, "grad": grad}
