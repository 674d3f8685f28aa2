"""Right numbers with `jax.custom_jvp` instead of `jax.custom_vjp`: there is no custom VJP, so the quantizer is
not wrapped in one (row 2) and no backward rule of the submission is called (row 3), although the gradient
does come from `jax.value_and_grad`.

The rows of this problem are advice (the program computes the same numbers whichever way the
straight-through gradient is written); the numbers decide, and these are right.

expect: accepted
fails: none
"""
# Right numbers with jax.custom_jvp instead of jax.custom_vjp.
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_jvp
    def q(w):
        return jnp.round(jnp.clip(w, -1, 1) * levels) / levels

    @q.defjvp
    def q_jvp(primals, tangents):
        (w,), (dw,) = primals, tangents
        return q(w), jnp.where(jnp.abs(w) <= 1, dw, 0.0)

    value, grad = jax.value_and_grad(lambda w: jnp.mean((x @ q(w) - y) ** 2))(w)
    return {"loss": value, "grad": grad}
