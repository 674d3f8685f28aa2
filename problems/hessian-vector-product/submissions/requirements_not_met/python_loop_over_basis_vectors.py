"""A Python loop over the D basis vectors, each pushed through the gradient with `jax.jvp` and weighted by
`v[i]`: the loop unrolls into the traced program, which grows with D (one gradient's worth of work per
parameter), though no D-by-D array is kept and the numbers are right.

expect: requirements_not_met
fails: cost-of-a-gradient
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    d = w.shape[0]

    def loss(w):
        z = x @ w
        return jnp.mean(jnp.logaddexp(0.0, z) - y * z)

    grad_fn = jax.grad(loss)
    out = jnp.zeros(d, w.dtype)
    for i in range(d):
        _, column = jax.jvp(grad_fn, (w,), (jnp.zeros(d, w.dtype).at[i].set(1.0),))
        out = out + column * v[i]
    return {"grad": grad_fn(w), "hvp": out}
