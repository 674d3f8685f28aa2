"""The step goes through `io_callback` (to log it, say) and the value Python returns is what the schedule
is computed from.

expect: requirements_not_met
fails: no-host-callback
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    step = io_callback(lambda s: np.int32(s), jax.ShapeDtypeStruct((), jnp.int32), step)
    t = jnp.asarray(step, jnp.float32)
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return jnp.where(step < warmup_steps, warm, decay)
