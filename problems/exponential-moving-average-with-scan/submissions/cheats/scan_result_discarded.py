"""A scan that computes the averages, whose result is thrown away; a Python loop computes what is returned.

expect: requirements_not_met
fails: scan-over-time, average-in-carry
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(m, row):
        m = decay * m + (1.0 - decay) * row
        return m, m

    jax.lax.scan(step, init, x)  # result discarded
    m, rows = init, []
    for t in range(x.shape[0]):
        m = decay * m + (1.0 - decay) * x[t]
        rows.append(m)
    return {"averages": jnp.stack(rows), "final": m}
