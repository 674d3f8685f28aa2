"""A scan that carries a running sum of the rows (a recurrence, but not the average) and stacks the rows
themselves; the averages come from a Python loop over the stacked rows, plus 0 * the sum.

expect: requirements_not_met
fails: scan-over-time, average-in-carry
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    total, rows = jax.lax.scan(lambda s, row: (s + row, row), jnp.zeros_like(init), x)
    m, out = init, []
    for t in range(x.shape[0]):
        m = decay * m + (1.0 - decay) * rows[t]
        out.append(m)
    return {"averages": jnp.stack(out) + 0.0 * total, "final": m}
