"""The three phases stacked into a 3-vector and the phase index, counted from comparisons, used to pick one
(an index into three values, not a table over steps).

expect: accepted
fails: none
"""
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = step.astype(jnp.float32)
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    cosine = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * (t - warmup_steps) / (total_steps - warmup_steps)))
    phase = (step >= warmup_steps).astype(jnp.int32) + (step >= total_steps).astype(jnp.int32)
    return jnp.stack([warm, cosine, min_lr])[phase]
