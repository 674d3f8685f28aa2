"""The warm-up fraction comes from `jax.pure_callback` and `jnp.where` selects on it: right numbers, and the
selection decides the rate (select-not-mask holds), but the step is handed to Python.

expect: requirements_not_met
fails: no-host-callback
"""
import jax
import jax.numpy as jnp
import numpy as np


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)
    frac = jax.pure_callback(lambda s: np.float32((s + 1) / max(warmup_steps, 1)),
                             jax.ShapeDtypeStruct((), jnp.float32), t)
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return jnp.where(frac <= 1.0, base_lr * frac, decay)
