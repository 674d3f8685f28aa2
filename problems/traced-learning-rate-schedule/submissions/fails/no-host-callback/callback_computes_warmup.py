"""`jnp.where` chooses between the phases, but the warmup value comes from `jax.pure_callback`: the step is
handed to Python at every step.

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
    host_warm = jax.pure_callback(lambda s, b: np.float32(b * (int(s) + 1) / max(warmup_steps, 1)),
                                  jax.ShapeDtypeStruct((), jnp.float32), step, base_lr)
    return jnp.where(step < warmup_steps, host_warm, decay)
