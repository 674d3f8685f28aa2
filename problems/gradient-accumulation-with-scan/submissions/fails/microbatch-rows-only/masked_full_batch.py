"""Masked full batch.

expect: requirements_not_met
fails: microbatch-rows-only
"""
import jax
import jax.numpy as jnp


def grad_accumulation(params, x, y, num_microbatches):
    rows = x.shape[0] // num_microbatches
    index = jnp.arange(x.shape[0])

    def masked_loss(p, j):
        mask = ((index // rows) == j).astype(jnp.float32)[:, None]
        h = jnp.tanh(x @ p["w1"] + p["b1"])       # all B rows, every step
        o = h @ p["w2"] + p["b2"]
        return jnp.sum(mask * (o - y) ** 2) / rows

    def step(carry, j):
        loss, grads = jax.value_and_grad(masked_loss)(params, j)
        return (carry[0] + loss, jax.tree.map(jnp.add, carry[1], grads)), None

    (loss, grads), _ = jax.lax.scan(step, (0.0, jax.tree.map(jnp.zeros_like, params)), jnp.arange(num_microbatches))
    return {"loss": loss / num_microbatches, "grads": jax.tree.map(lambda g: g / num_microbatches, grads)}
