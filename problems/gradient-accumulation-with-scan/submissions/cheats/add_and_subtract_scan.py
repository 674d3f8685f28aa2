"""The scan's result added and subtracted again next to a full-batch value_and_grad.

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
    n = num_microbatches
    xs = x.reshape(n, -1, x.shape[1]); ys = y.reshape(n, -1, y.shape[1])

    def step(carry, batch):
        loss_sum, grad_sum = carry
        loss, grads = jax.value_and_grad(_loss)(params, *batch)
        return (loss_sum + loss, jax.tree.map(jnp.add, grad_sum, grads)), None

    zeros = jax.tree.map(jnp.zeros_like, params)
    (loss_sum, grad_sum), _ = jax.lax.scan(step, (jnp.float32(0.0), zeros), (xs, ys))
    full_loss, full_grads = jax.value_and_grad(_loss)(params, x, y)
    return {"loss": full_loss + loss_sum - loss_sum,
            "grads": jax.tree.map(lambda a, g: a + g / n - g / n, full_grads, grad_sum)}
