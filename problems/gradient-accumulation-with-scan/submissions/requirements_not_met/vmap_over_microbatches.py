"""Vmap over microbatches.

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
    losses, grads = jax.vmap(jax.value_and_grad(_loss), in_axes=(None, 0, 0))(params, xs, ys)
    return {"loss": losses.mean(), "grads": jax.tree.map(lambda g: g.mean(0), grads)}
