"""The step converted to a float by counting up to it with `lax.fori_loop(0, step, ...)`: a loop whose trip
count is the step, so step 10^6 costs a million iterations.

expect: requirements_not_met
fails: no-step-table
"""
import jax
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jax.lax.fori_loop(0, step, lambda i, c: c + 1.0, jnp.float32(0.0))
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return jnp.where(step < warmup_steps, warm, decay)
