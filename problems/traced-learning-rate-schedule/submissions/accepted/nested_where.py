"""Nested where.

expect: accepted
fails: none
"""
# Nested jnp.where with the sin^2 form of the cosine decay.
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, dtype=jnp.float32)
    warm = base_lr * (t + 1.0) / jnp.maximum(warmup_steps, 1)
    frac = (t - warmup_steps) / (total_steps - warmup_steps)
    cosine = min_lr + (base_lr - min_lr) * jnp.cos(0.5 * jnp.pi * frac) ** 2
    return jnp.where(step < warmup_steps, warm, jnp.where(step >= total_steps, min_lr, cosine))
