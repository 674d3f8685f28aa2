"""Reverse-over-forward: `jax.grad` of the directional derivative `jvp(loss)(w; v)`. Right numbers, no
Hessian, but the outer pass is reverse mode.

Forward-over-reverse is advice (the traced program cannot tell the ways apart); what decides is that no
D-by-D array is formed, and this program forms none.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.mean(jax.nn.softplus(z) - y * z)

    directional = lambda w: jax.jvp(loss, (w,), (v,))[1]
    return {"grad": jax.grad(loss)(w), "hvp": jax.grad(directional)(w)}
