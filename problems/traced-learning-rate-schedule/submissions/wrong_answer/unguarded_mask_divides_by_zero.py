"""A 0/1 mask (`jnp.where(c, 1.0, 0.0)`) with the warmup divided by W unguarded: with W = 0 the warmup is
inf, and 0 * inf = NaN (a `jnp.where` between the phases would simply not choose it).

expect: wrong_answer
fails: select-not-mask
"""
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)
    in_warmup = jnp.where(step < warmup_steps, 1.0, 0.0)
    warm = base_lr * (t + 1) / warmup_steps
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return in_warmup * warm + (1.0 - in_warmup) * decay
