"""Half the scan's gradient plus half a full-batch gradient: the scan contributes, but the answer is also
computed around it.

expect: requirements_not_met
fails: one-scan, grad-inside-scan, microbatch-rows-only
"""
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    o = jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def grad_accumulation(params, x, y, num_microbatches):
    n = num_microbatches
    xs, ys = x.reshape(n, -1, x.shape[1]), y.reshape(n, -1, y.shape[1])

    def step(carry, batch):
        loss, grads = jax.value_and_grad(_loss)(params, *batch)
        return jax.tree.map(jnp.add, carry, (loss, grads)), None

    (loss_sum, grad_sum), _ = jax.lax.scan(step, (0.0, jax.tree.map(jnp.zeros_like, params)), (xs, ys))
    full_loss, full_grads = jax.value_and_grad(_loss)(params, x, y)
    mix = lambda mine, full: 0.5 * mine / n + 0.5 * full
    return {"loss": mix(loss_sum, full_loss), "grads": jax.tree.map(mix, grad_sum, full_grads)}
