"""Grad through scan.

expect: requirements_not_met
fails: one-scan, grad-inside-scan, microbatch-rows-only
"""
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def grad_accumulation(params, x, y, num_microbatches):
    xs = x.reshape(num_microbatches, -1, x.shape[1])
    ys = y.reshape(num_microbatches, -1, y.shape[1])

    def total_loss(p):
        def step(carry, batch):
            return carry + _loss(p, *batch), None
        total, _ = jax.lax.scan(step, 0.0, (xs, ys))
        return total / num_microbatches

    loss, grads = jax.value_and_grad(total_loss)(params)  # differentiates through the scan
    return {"loss": loss, "grads": grads}
