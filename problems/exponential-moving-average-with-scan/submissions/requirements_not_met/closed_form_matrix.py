"""Closed form matrix.

expect: requirements_not_met
fails: scan-over-time, average-in-carry
"""
# Right numbers from the closed form: a T-by-T lower-triangular matrix of powers of beta, O(T^2).
import jax.numpy as jnp


def ema(x, init, decay):
    steps = x.shape[0]
    t = jnp.arange(1, steps + 1, dtype=jnp.float32)
    lag = t[:, None] - t[None, :]
    weights = jnp.where(lag >= 0, (1.0 - decay) * decay ** jnp.maximum(lag, 0.0), 0.0)
    averages = weights @ x + (decay ** t)[:, None] * init[None, :]
    return {"averages": averages, "final": averages[-1]}
