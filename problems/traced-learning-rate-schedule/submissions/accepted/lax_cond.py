"""Lax cond.

expect: accepted
fails: none
"""
# lax.cond between the phases; the Python `if` is on the static warmup_steps only.
import jax
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)

    def warm():
        return base_lr * (t + 1) / warmup_steps

    def decay():
        progress = jnp.minimum((t - warmup_steps) / (total_steps - warmup_steps), 1.0)
        return min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * progress))

    if warmup_steps == 0:
        return decay()
    return jax.lax.cond(step < warmup_steps, warm, decay)
