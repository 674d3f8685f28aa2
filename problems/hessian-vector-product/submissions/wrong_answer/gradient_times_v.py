"""`grad * v`, elementwise: a first derivative scaled by the direction, not the second derivative along it.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.mean(jax.nn.softplus(z) - y * z)

    g = jax.grad(loss)(w)
    return {"grad": g, "hvp": g * v}
