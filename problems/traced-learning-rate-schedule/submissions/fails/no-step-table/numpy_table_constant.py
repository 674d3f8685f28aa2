"""The whole schedule precomputed in NumPy (one entry per step up to T) and captured as a constant, then
indexed by the step.

expect: requirements_not_met
fails: no-step-table
"""
import math

import jax.numpy as jnp
import numpy as np


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    s = np.arange(total_steps + 1, dtype=np.float64)
    warm = (s + 1) / max(warmup_steps, 1)
    cosine = 0.5 * (1 + np.cos(math.pi * np.clip((s - warmup_steps) / (total_steps - warmup_steps), 0, 1)))
    share = np.where(s < warmup_steps, warm, 0.0).astype(np.float32)
    cos_part = np.where(s < warmup_steps, 0.0, cosine).astype(np.float32)
    i = jnp.minimum(step, total_steps)
    return jnp.asarray(share)[i] * base_lr + jnp.asarray(cos_part)[i] * (base_lr - min_lr) + jnp.where(
        step < warmup_steps, 0.0, min_lr)
