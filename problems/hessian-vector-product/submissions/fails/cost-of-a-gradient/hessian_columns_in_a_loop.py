"""The product assembled column by column: a `fori_loop` over the D basis vectors pushes each through the
gradient with `jax.jvp` (column i of the Hessian, a D-vector) and adds it times `v[i]`. No D-by-D array is
ever kept, and the numbers are right, but it is D gradients' worth of work where one direction would do.

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

    def add_column(i, acc):
        basis = jnp.zeros(d, w.dtype).at[i].set(1.0)
        _, column = jax.jvp(grad_fn, (w,), (basis,))  # H e_i
        return acc + column * v[i]

    return {"grad": grad_fn(w), "hvp": jax.lax.fori_loop(0, d, add_column, jnp.zeros(d, w.dtype))}
