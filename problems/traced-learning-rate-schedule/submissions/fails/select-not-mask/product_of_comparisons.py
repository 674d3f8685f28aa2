"""Three masks, each a product of comparisons (`(step >= W) * (step < T)`), one per phase, with no clip on
the cosine.

expect: requirements_not_met
fails: select-not-mask
"""
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    cosine = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * (t - warmup_steps) / (total_steps - warmup_steps)))
    first = step < warmup_steps
    middle = (step >= warmup_steps) * (step < total_steps)
    last = step >= total_steps
    return first * warm + middle * cosine + last * min_lr
