"""Forgets min_lr inside the cosine: base_lr * (1 + cos) / 2 decays to 0, and only the floor after T is
min_lr, so the rate jumps at T.

expect: wrong_answer
fails: none
"""
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    progress = (t - warmup_steps) / (total_steps - warmup_steps)
    decay = base_lr * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return jnp.where(step < warmup_steps, warm, jnp.where(step >= total_steps, min_lr, decay))
