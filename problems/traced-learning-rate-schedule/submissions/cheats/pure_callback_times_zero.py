"""The schedule computed with `jnp.where`, plus `0 * jax.pure_callback(...)` of the step: the callback's
value does not matter, but the step is still handed to Python at every step.

expect: requirements_not_met
fails: no-host-callback
"""
import jax
import jax.numpy as jnp
import numpy as np


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    host = jax.pure_callback(lambda s: np.float32(s), jax.ShapeDtypeStruct((), jnp.float32), step)
    return jnp.where(step < warmup_steps, warm, decay) + 0.0 * host
