"""Mask over reshaped batch.

expect: requirements_not_met
fails: microbatch-rows-only
"""
import jax, jax.numpy as jnp
from jax import lax
def loss_fn(p, x, y):
    o = jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]
def masked_loss(p, xs, ys, m):
    # forward pass on ALL microbatches at once (shape (n, S, D)), masked to microbatch j
    o = jnp.tanh(xs @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return jnp.sum(m[:, None, None] * (o - ys) ** 2) / xs.shape[1]
def grad_accumulation(params, x, y, num_microbatches):
    n = num_microbatches
    xs = x.reshape(n, -1, x.shape[1]); ys = y.reshape(n, -1, y.shape[1])
    def step(c, j):
        m = (jnp.arange(n) == j).astype(jnp.float32)
        l, g = jax.value_and_grad(masked_loss)(params, xs, ys, m)
        return (c[0] + l, jax.tree.map(jnp.add, c[1], g)), None
    (l, g), _ = lax.scan(step, (0.0, jax.tree.map(jnp.zeros_like, params)), jnp.arange(n))
    return {"loss": l / n, "grads": jax.tree.map(lambda t: t / n, g)}
