"""Dynamic slice over indices.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax import lax


def grad_accumulation(params, x, y, num_microbatches):
    rows = x.shape[0] // num_microbatches

    def loss_fn(p, xb, yb):
        hidden = jnp.tanh(jnp.einsum("sd,dh->sh", xb, p["w1"]) + p["b1"])
        pred = jnp.einsum("sh,hk->sk", hidden, p["w2"]) + p["b2"]
        return ((pred - yb) ** 2).sum() / xb.shape[0]

    def step(carry, j):
        xb = lax.dynamic_slice_in_dim(x, j * rows, rows, axis=0)
        yb = lax.dynamic_slice(y, (j * rows, 0), (rows, y.shape[1]))
        loss, grads = jax.value_and_grad(loss_fn)(params, xb, yb)
        new = {"loss": carry["loss"] + loss,
               "grads": jax.tree.map(jnp.add, carry["grads"], grads)}
        return new, None

    start = {"loss": jnp.float32(0), "grads": jax.tree.map(jnp.zeros_like, params)}
    total, _ = lax.scan(step, start, jnp.arange(num_microbatches))
    return jax.tree.map(lambda v: v / num_microbatches, total)
