"""Reverse over reverse.

Forward-over-reverse is advice (the traced program cannot tell the ways apart); what decides is that no
D-by-D array is formed, and this program forms none.

expect: accepted
fails: none
"""
# Right numbers without a Hessian, but reverse-over-reverse: grad of <grad(w), v>.
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.mean(jax.nn.softplus(z) - y * z)

    grad_fn = jax.grad(loss)
    return {"grad": grad_fn(w), "hvp": jax.grad(lambda w: jnp.vdot(grad_fn(w), v))(w)}
