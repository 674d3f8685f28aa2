"""A `lax.scan` over all T + 1 steps that keeps the rate of the step asked for: a loop of total_steps
iterations to read one number.

expect: requirements_not_met
fails: no-step-table
"""
import jax
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    def body(found, s):
        t = s.astype(jnp.float32)
        warm = base_lr * (t + 1) / max(warmup_steps, 1)
        progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
        decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
        rate = jnp.where(s < warmup_steps, warm, decay)
        return jnp.where(s == jnp.minimum(step, total_steps), rate, found), None

    rate, _ = jax.lax.scan(body, jnp.float32(0.0), jnp.arange(total_steps + 1))
    return rate
