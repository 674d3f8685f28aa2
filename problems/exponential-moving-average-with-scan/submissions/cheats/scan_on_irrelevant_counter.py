"""A scan over the step numbers that only counts, added to averages a Python loop computes.

expect: requirements_not_met
fails: scan-over-time, average-in-carry
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    steps = x.shape[0]
    count, ticks = jax.lax.scan(lambda c, t: (c + 1.0, c * 0.0), jnp.float32(0.0), jnp.arange(steps))
    m, rows = init, []
    for t in range(steps):
        m = decay * m + (1.0 - decay) * x[t]
        rows.append(m)
    averages = jnp.stack(rows) + ticks[:, None]
    return {"averages": averages, "final": m + 0.0 * count}
