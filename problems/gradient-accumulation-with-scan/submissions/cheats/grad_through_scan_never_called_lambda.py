"""The gradient taken through the whole scan, with a `jax.value_and_grad` of one microbatch's loss written
inside the scan body as a lambda that is never called. The source "calls autodiff inside the scan", but the
program differentiates through it: the backward pass is a second loop run in reverse over residuals stacked
across steps, which is what the requirement forbids.

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
            autodiff = lambda b: jax.value_and_grad(_loss)(p, *b)  # noqa: E731, F841 - never called
            return carry + _loss(p, *batch), None
        total, _ = jax.lax.scan(step, 0.0, (xs, ys))
        return total / num_microbatches

    loss, grads = jax.value_and_grad(total_loss)(params)
    return {"loss": loss, "grads": grads}
