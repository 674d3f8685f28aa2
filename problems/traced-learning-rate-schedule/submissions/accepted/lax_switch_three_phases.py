"""Lax switch three phases.

expect: accepted
fails: none
"""
# lax.switch over three phases, the branch index computed from the step.
import jax
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.float32(step)
    index = (step >= warmup_steps).astype(jnp.int32) + (step >= total_steps).astype(jnp.int32)
    span = total_steps - warmup_steps
    branches = [
        lambda: base_lr * (t + 1) / max(warmup_steps, 1),
        lambda: min_lr + (base_lr - min_lr) * (1 + jnp.cos(jnp.pi * (t - warmup_steps) / span)) / 2,
        lambda: jnp.asarray(min_lr, jnp.float32),
    ]
    return jax.lax.switch(index, branches)
