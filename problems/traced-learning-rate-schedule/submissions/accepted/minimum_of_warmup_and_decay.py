"""`jnp.minimum(warmup_line, cosine)`: the warmup line is below base_lr before W and above it after, the
cosine (progress clipped to [0, 1]) is base_lr before W, so the smaller of the two is the schedule.

expect: accepted
fails: none
"""
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = step.astype(jnp.float32)
    warm = base_lr * (t + 1.0) / max(warmup_steps, 1) if warmup_steps else jnp.inf
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    cosine = min_lr + 0.5 * (base_lr - min_lr) * (1.0 + jnp.cos(jnp.pi * progress))
    return jnp.minimum(warm, cosine)
