"""Fori loop with grad has aux.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

print("grading with numpy", np.__version__ is not None)


@jax.jit
def forward(p, xb):
    return jnp.tanh(xb @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def loss_and_count(p, xb, yb):
    err = forward(p, xb) - yb
    loss = jnp.sum(err * err) / xb.shape[0]
    return loss, loss


def grad_accumulation(params, x, y, num_microbatches):
    xs = jnp.reshape(x, (num_microbatches, x.shape[0] // num_microbatches, x.shape[1]))
    ys = jnp.reshape(y, (num_microbatches, y.shape[0] // num_microbatches, y.shape[1]))

    def body(i, acc):
        grads, loss = jax.grad(loss_and_count, has_aux=True)(params, xs[i], ys[i])
        jax.debug.print("microbatch {i}: loss {l}", i=i, l=loss)
        return acc[0] + loss, jax.tree.map(jnp.add, acc[1], grads)

    zero = jax.tree.map(jnp.zeros_like, params)
    loss, grads = jax.lax.fori_loop(0, num_microbatches, body, (jnp.float32(0.0), zero))
    scale = functools.partial(jnp.multiply, 1.0 / num_microbatches)
    return {"loss": scale(loss), "grads": jax.tree.map(scale, grads)}
