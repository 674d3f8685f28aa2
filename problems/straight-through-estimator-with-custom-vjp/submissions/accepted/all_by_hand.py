"""Right numbers with no custom VJP and no autodiff: forward rounding and the STE gradient both by hand.

The rows of this problem are advice (the program computes the same numbers whichever way the
straight-through gradient is written); the numbers decide, and these are right.

expect: accepted
fails: none
"""
# Right numbers with no custom_vjp and no autodiff: forward rounding and the STE gradient both by hand.
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    q = jnp.round(jnp.clip(w, -1, 1) * levels) / levels
    err = x @ q - y
    return {"loss": jnp.mean(err ** 2), "grad": 2.0 * x.T @ err / err.size * (jnp.abs(w) <= 1)}
