"""Arange table.

expect: requirements_not_met
fails: no-step-table
"""
# Right numbers, but it computes the rate of every step up to total_steps and indexes the one asked for.
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.arange(total_steps + 1, dtype=jnp.float32)
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0, 1)))
    table = jnp.where(t < warmup_steps, warm, decay)
    return table[jnp.minimum(step, total_steps)]
