"""Primal and tangent swapped: `jax.jvp(grad_fn, (v,), (w,))` is H(v) w, the Hessian at v applied to w.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.mean(jax.nn.softplus(z) - y * z)

    grad_fn = jax.grad(loss)
    _, hv = jax.jvp(grad_fn, (v,), (w,))
    return {"grad": grad_fn(w), "hvp": hv}
