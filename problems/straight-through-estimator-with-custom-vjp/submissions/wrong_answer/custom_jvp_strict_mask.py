"""A straight-through estimator written with `jax.custom_jvp`, and a strict mask (`< 1`) that drops the
gradient of a weight at exactly +-1: wrong numbers, and the three rows fail for their true reason, that there
is no `jax.custom_vjp` (the rows name the `custom_jvp`), not that some structure is decorative.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    @jax.custom_jvp
    def q(w):
        return jnp.round(jnp.clip(w, -1, 1) * levels) / levels

    @q.defjvp
    def q_jvp(primals, tangents):
        (w,), (dw,) = primals, tangents
        return q(w), jnp.where(jnp.abs(w) < 1, dw, 0.0)

    value, grad = jax.value_and_grad(lambda w: jnp.mean((x @ q(w) - y) ** 2))(w)
    return {"loss": value, "grad": grad}
