"""Python loop into buffer.

expect: requirements_not_met
fails: scan-over-time, average-in-carry
"""
# Right numbers, but both wrong: a Python loop, writing each step into a preallocated buffer.
import jax.numpy as jnp


def ema(x, init, decay):
    m = init
    out = jnp.zeros_like(x)
    for t in range(x.shape[0]):
        m = decay * m + (1.0 - decay) * x[t]
        out = out.at[t].set(m)
    return {"averages": out, "final": m}
