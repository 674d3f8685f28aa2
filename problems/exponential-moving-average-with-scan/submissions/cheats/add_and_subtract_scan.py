"""The scan's averages added and subtracted again next to averages from a Python loop.

expect: requirements_not_met
fails: scan-over-time, average-in-carry
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(m, row):
        m = decay * m + (1.0 - decay) * row
        return m, m

    final, averages = jax.lax.scan(step, init, x)
    m, rows = init, []
    for t in range(x.shape[0]):
        m = decay * m + (1.0 - decay) * x[t]
        rows.append(m)
    loop = jnp.stack(rows)
    return {"averages": loop + averages - averages, "final": m + final - final}
