"""The schedule built with `functools.partial` over the static arguments, a `jax.jit` with static
arguments inside, and the step logged with `jax.debug.print` (a callback that only prints).

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnames=("warmup_steps", "total_steps"))
def _schedule(step, base_lr, min_lr, *, warmup_steps, total_steps):
    jax.debug.print("lr schedule at step {}", step)
    t = jnp.float32(step)
    warm = base_lr * (t + 1) / jnp.maximum(warmup_steps, 1)
    frac = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0, 1)
    decayed = min_lr + (base_lr - min_lr) * (1 + jnp.cos(jnp.pi * frac)) / 2
    return jax.lax.select(step < warmup_steps, warm, decayed)


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    return functools.partial(_schedule, warmup_steps=warmup_steps, total_steps=total_steps)(step, base_lr, min_lr)
