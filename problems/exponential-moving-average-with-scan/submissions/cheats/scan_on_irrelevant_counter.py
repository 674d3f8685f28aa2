"""A scan over the step numbers that only counts, added to averages from the closed form with a T-by-T
matrix of weights.

expect: requirements_not_met
fails: scan-over-time, average-in-carry
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    steps = x.shape[0]
    count, ticks = jax.lax.scan(lambda c, t: (c + 1.0, c * 0.0), jnp.float32(0.0), jnp.arange(steps))
    t = jnp.arange(1, steps + 1, dtype=jnp.float32)
    lag = t[:, None] - t[None, :]
    weights = jnp.where(lag >= 0, (1.0 - decay) * decay ** jnp.maximum(lag, 0.0), 0.0)
    averages = weights @ x + (decay ** t)[:, None] * init[None, :] + ticks[:, None]
    return {"averages": averages, "final": averages[-1] + 0.0 * count}
