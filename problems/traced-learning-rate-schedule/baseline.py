"""The naive "before": compute the rate of every step up to total_steps, then index the one asked for."""
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.arange(total_steps + 1, dtype=jnp.float32)
    warmup = base_lr * (t + 1.0) / max(warmup_steps, 1)
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1.0 + jnp.cos(jnp.pi * progress))
    table = jnp.where(t < warmup_steps, warmup, decay)
    return table[jnp.minimum(step, total_steps)]
