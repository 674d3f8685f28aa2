"""Value and grad then jvp.

expect: accepted
fails: none
"""
# The gradient from jax.value_and_grad inside the function pushed forward with jvp (has_aux-free style).
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def grad_only(w):
        _, g = jax.value_and_grad(lambda w: jnp.mean(jax.nn.softplus(x @ w) - y * (x @ w)))(w)
        return g

    g, hv = jax.jvp(grad_only, [w], [v])
    return dict(grad=g, hvp=hv)
