"""Strided split: step j gets rows j, j+n, j+2n, ... (equal sizes, right sums, wrong microbatches).

expect: requirements_not_met
fails: microbatch-rows-only
"""
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def grad_accumulation(params, x, y, num_microbatches):
    n = num_microbatches
    xs = x.reshape(-1, n, x.shape[1]).transpose(1, 0, 2)
    ys = y.reshape(-1, n, y.shape[1]).transpose(1, 0, 2)

    def step(carry, batch):
        loss_sum, grad_sum = carry
        loss, grads = jax.value_and_grad(_loss)(params, *batch)
        return (loss_sum + loss, jax.tree.map(jnp.add, grad_sum, grads)), None

    zeros = jax.tree.map(jnp.zeros_like, params)
    (loss_sum, grad_sum), _ = jax.lax.scan(step, (jnp.float32(0.0), zeros), (xs, ys))
    return {"loss": loss_sum / n, "grads": jax.tree.map(lambda g: g / n, grad_sum)}
