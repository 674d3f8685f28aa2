"""Lax map then average.

expect: requirements_not_met
fails: one-scan
"""
import jax, jax.numpy as jnp
from jax import lax
def loss_fn(p, x, y):
    o = jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]
def grad_accumulation(params, x, y, num_microbatches):
    n = num_microbatches
    xs = x.reshape(n, -1, x.shape[1]); ys = y.reshape(n, -1, y.shape[1])
    ls, gs = lax.map(lambda b: jax.value_and_grad(loss_fn)(params, *b), (xs, ys))
    return {"loss": ls.mean(), "grads": jax.tree.map(lambda t: t.mean(0), gs)}
