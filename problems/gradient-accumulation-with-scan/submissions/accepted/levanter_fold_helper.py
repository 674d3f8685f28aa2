"""Levanter's gradient accumulation: `jax.value_and_grad(loss)` is handed to a small `fold` helper, which
calls `lax.scan` with a step that applies it to one microbatch and adds the results into the carry. The
autodiff call is not written inside the function passed to `lax.scan`, but each step computes its
microbatch's loss and gradient, which is what the row checks.

expect: accepted
"""
import functools

import jax
import jax.numpy as jnp


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def fold(fn, init, xs):
    """Sum ``fn``'s results over the leading axis of ``xs`` with one scan."""
    def body(acc, x):
        out = fn(*x)
        return jax.tree.map(jnp.add, acc, out), None
    acc, _ = jax.lax.scan(body, init, xs)
    return acc


def microbatched(loss_and_grad, num_microbatches):
    @functools.wraps(loss_and_grad)
    def wrapped(params, x, y):
        xs = x.reshape(num_microbatches, -1, x.shape[1])
        ys = y.reshape(num_microbatches, -1, y.shape[1])
        zeros = (jnp.zeros((), jnp.float32), jax.tree.map(jnp.zeros_like, params))
        loss, grads = fold(functools.partial(loss_and_grad, params), zeros, (xs, ys))
        return loss / num_microbatches, jax.tree.map(lambda g: g / num_microbatches, grads)
    return wrapped


def grad_accumulation(params, x, y, num_microbatches):
    loss, grads = microbatched(jax.value_and_grad(_loss), num_microbatches)(params, x, y)
    return {"loss": loss, "grads": grads}
