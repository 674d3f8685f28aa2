"""The phases chosen with `jnp.where` (right), but the warmup starts from 0 (`base_lr * t / w` instead of
`(t + 1) / w`), and the rate is handed to Python with `jax.pure_callback` before it is returned. Two true
reasons: the numbers are wrong and a host callback is on the rate's path; the selection still decides the
rate, so select-not-mask holds.

expect: wrong_answer
fails: no-host-callback
"""
import jax
import jax.numpy as jnp
import numpy as np


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)
    warmup = base_lr * t / max(warmup_steps, 1)
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1.0 + jnp.cos(jnp.pi * progress))
    rate = jnp.where(step < warmup_steps, warmup, decay)
    return jax.pure_callback(lambda r: np.float32(r), jax.ShapeDtypeStruct((), jnp.float32), rate)
