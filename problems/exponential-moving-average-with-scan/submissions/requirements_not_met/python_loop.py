"""Python loop.

expect: requirements_not_met
fails: scan-over-time, average-in-carry
"""
# Right numbers, but a Python loop unrolls T copies of the update into the program.
import jax.numpy as jnp


def ema(x, init, decay):
    m = init
    rows = []
    for t in range(x.shape[0]):
        m = decay * m + (1.0 - decay) * x[t]
        rows.append(m)
    return {"averages": jnp.stack(rows), "final": m}
