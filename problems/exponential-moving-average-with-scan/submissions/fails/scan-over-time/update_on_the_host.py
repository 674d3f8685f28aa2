"""A scan over the rows whose step hands the update to NumPy through `jax.pure_callback`: the carry holds
the running average and the scan stacks it, right numbers, but JAX never computes the recurrence: Python
does, once per step, outside the traced program.

expect: requirements_not_met
fails: scan-over-time
"""
import jax
import jax.numpy as jnp
import numpy as np


def _update(average, row, decay):
    return (decay * average + (1 - decay) * row).astype(np.float32)


def ema(x, init, decay):
    def step(average, row):
        new = jax.pure_callback(_update, jax.ShapeDtypeStruct(average.shape, average.dtype), average, row, decay)
        return new, new

    final, averages = jax.lax.scan(step, init, x)
    return {"averages": averages, "final": final}
