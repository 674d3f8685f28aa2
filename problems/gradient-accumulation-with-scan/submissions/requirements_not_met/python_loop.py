"""Python loop.

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
    rows = x.shape[0] // num_microbatches
    total = 0.0
    acc = jax.tree.map(jnp.zeros_like, params)
    for j in range(num_microbatches):  # unrolled into the trace: no scan
        loss, grads = jax.value_and_grad(_loss)(params, x[j * rows:(j + 1) * rows], y[j * rows:(j + 1) * rows])
        total = total + loss
        acc = jax.tree.map(jnp.add, acc, grads)
    return {"loss": total / num_microbatches, "grads": jax.tree.map(lambda g: g / num_microbatches, acc)}
