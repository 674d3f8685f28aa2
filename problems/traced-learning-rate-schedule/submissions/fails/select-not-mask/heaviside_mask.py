"""`jnp.heaviside(t - W, 1.0)` as the weight of the decay phase.

expect: requirements_not_met
fails: select-not-mask
"""
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    after = jnp.heaviside(t - warmup_steps, 1.0)
    return (1.0 - after) * warm + after * decay
