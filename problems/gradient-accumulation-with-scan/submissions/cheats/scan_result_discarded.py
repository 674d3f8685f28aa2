"""A proper scan whose result is discarded; the answer is a full-batch value_and_grad.

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

    def step(carry, batch):
        loss, grads = jax.value_and_grad(_loss)(params, *batch)
        return jax.tree.map(jnp.add, carry, (loss, grads)), None

    jax.lax.scan(step, (0.0, jax.tree.map(jnp.zeros_like, params)), (xs, ys))
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    return {"loss": loss, "grads": grads}
