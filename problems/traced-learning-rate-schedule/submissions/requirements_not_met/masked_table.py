"""Masked table.

expect: requirements_not_met
fails: no-step-table, select-not-mask
"""
# Right numbers, but both a table over all steps and 0/1 masks to mix the phases.
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.arange(total_steps + 1, dtype=jnp.float32)
    in_warmup = (t < warmup_steps).astype(jnp.float32)
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0, 1)))
    table = in_warmup * warm + (1 - in_warmup) * decay
    is_past = (step > total_steps).astype(jnp.float32)
    return is_past * min_lr + (1 - is_past) * table[jnp.minimum(step, total_steps)]
