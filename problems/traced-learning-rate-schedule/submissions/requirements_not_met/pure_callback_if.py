"""Right numbers, but `jax.pure_callback` sends the step back to Python to run an ordinary if/else: the
phases are chosen in Python, not by a selection in the program.

expect: requirements_not_met
fails: no-host-callback, select-not-mask
"""
import math

import jax
import jax.numpy as jnp
import numpy as np


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    def schedule(step, base, low):
        step, base, low = int(step), np.float32(base), np.float32(low)
        if step < warmup_steps:
            return np.float32(base * np.float32(step + 1) / np.float32(warmup_steps))
        if step >= total_steps:
            return np.float32(low)
        progress = (step - warmup_steps) / (total_steps - warmup_steps)
        return np.float32(low + (base - low) * 0.5 * (1 + math.cos(math.pi * progress)))

    return jax.pure_callback(schedule, jax.ShapeDtypeStruct((), jnp.float32), step, base_lr, min_lr)
