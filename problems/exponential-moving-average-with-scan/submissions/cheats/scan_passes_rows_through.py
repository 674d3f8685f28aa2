"""A scan of length T that only passes the rows through; the recurrence runs in a Python loop after it.

expect: requirements_not_met
fails: scan-over-time, average-in-carry
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    _, rows = jax.lax.scan(lambda c, row: (c, row), None, x)
    m, out = init, []
    for t in range(x.shape[0]):
        m = decay * m + (1.0 - decay) * rows[t]
        out.append(m)
    return {"averages": jnp.stack(out), "final": m}
