"""A scan of length num_microbatches that only passes the rows through; the gradient is full-batch.

expect: requirements_not_met
fails: one-scan, grad-inside-scan, microbatch-rows-only
"""
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    o = jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def grad_accumulation(params, x, y, num_microbatches):
    xs = x.reshape(num_microbatches, -1, x.shape[1])
    ys = y.reshape(num_microbatches, -1, y.shape[1])
    _, (xs, ys) = jax.lax.scan(lambda c, b: (c, b), 0.0, (xs, ys))
    loss, grads = jax.value_and_grad(_loss)(params, xs.reshape(x.shape), ys.reshape(y.shape))
    return {"loss": loss, "grads": grads}
