"""No floor after total.

expect: wrong_answer
fails: none
"""
# Forgets to stop at total_steps: the cosine keeps going and the rate climbs back up.
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * (t - warmup_steps) / (total_steps - warmup_steps)))
    return jnp.where(step < warmup_steps, warm, decay)
