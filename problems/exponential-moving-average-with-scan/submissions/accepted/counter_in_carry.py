"""Counter in carry.

expect: accepted
fails: none
"""
# Scans with no xs, carrying a step counter and indexing the row; final taken from the stacked outputs.
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(carry, _):
        t, m = carry
        m = decay * m + (1 - decay) * x[t]
        return (t + 1, m), m

    _, averages = jax.lax.scan(step, (jnp.int32(0), init), None, length=x.shape[0])
    return {"averages": averages, "final": averages[-1]}
