"""A one-step `lax.fori_loop` computes `step + 1` (the warm-up's count), and `jnp.where` selects on it: a loop
of fixed length 1 is no table over the steps, and the selection decides the rate.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)
    done = jax.lax.fori_loop(0, 1, lambda i, c: c + t + 1.0, jnp.float32(0.0))
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return jnp.where(done <= warmup_steps, base_lr * done / max(warmup_steps, 1), decay)
