"""`0 * jnp.where(...)` added to the masked formula.

expect: requirements_not_met
fails: select-not-mask
"""
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    chosen = jnp.where(step < warmup_steps, warm, decay)
    in_warmup = (step < warmup_steps).astype(jnp.float32)
    return 0.0 * chosen + in_warmup * warm + (1.0 - in_warmup) * decay
