"""Off by one in the cosine: progress (t - W + 1) / (T - W), so the decay starts below base_lr at t = W and
reaches min_lr one step early.

expect: wrong_answer
fails: none
"""
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    progress = jnp.clip((t - warmup_steps + 1) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return jnp.where(step < warmup_steps, warm, decay)
