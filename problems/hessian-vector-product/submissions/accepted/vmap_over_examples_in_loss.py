"""The loss built with `jax.vmap` over examples (one logit per example) inside the function that
`jax.grad` and then `jax.jvp` differentiate.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def example_loss(w, xn, yn):
    z = jnp.dot(xn, w)
    return jax.nn.softplus(z) - yn * z


def hvp(w, x, y, v):
    def loss(w):
        return jnp.mean(jax.vmap(example_loss, in_axes=(None, 0, 0))(w, x, y))

    grad, product = jax.jvp(jax.grad(loss), (w,), (v,))
    return {"grad": grad, "hvp": product}
