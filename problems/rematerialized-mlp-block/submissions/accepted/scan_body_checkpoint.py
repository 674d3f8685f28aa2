"""maxtext-style: the checkpointed block is the body of a `lax.scan` (here over the batch rows, one row per
step, summing squared errors in the carry), with `prevent_cse=False` as scanned bodies use.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax import lax


def _row(params, x_row):
    h = jnp.tanh(x_row @ params["w1"] + params["b1"])
    return x_row + h @ params["w2"] + params["b2"]


def remat_mlp_block(params, x, y):
    row = jax.checkpoint(_row, policy=jax.checkpoint_policies.dots_saveable, prevent_cse=False)

    def loss(p):
        def step(total, xy):
            x_row, y_row = xy
            return total + jnp.sum((row(p, x_row[None]) - y_row[None]) ** 2), None

        total, _ = lax.scan(step, jnp.float32(0.0), (x, y))
        return total / y.size

    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "grads": grads}
