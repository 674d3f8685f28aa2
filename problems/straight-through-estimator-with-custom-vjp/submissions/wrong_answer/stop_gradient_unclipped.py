"""The `stop_gradient` trick, `w + stop_gradient(q(w) - w)`: its gradient is the identity everywhere, also
for weights beyond +-1, so the numbers are wrong; and there is no `jax.custom_vjp`, which the three rows say
(naming the `stop_gradient`), rather than calling the rounding decorative.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    def q(w):
        r = jnp.round(jnp.clip(w, -1, 1) * levels) / levels
        return w + jax.lax.stop_gradient(r - w)

    value, grad = jax.value_and_grad(lambda w: jnp.mean((x @ q(w) - y) ** 2))(w)
    return {"loss": value, "grad": grad}
