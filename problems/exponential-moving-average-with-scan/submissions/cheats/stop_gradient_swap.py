"""`loop + stop_gradient(scan - loop)`: the stop_gradient trick, which only changes derivatives. The values
returned are the scan's stacked averages (the loop cancels out), so `average-in-carry` holds; but a Python
loop unrolled next to the scan computes them too, a path around it, so `scan-over-time` fails.

expect: requirements_not_met
fails: scan-over-time
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
    return {"averages": loop + jax.lax.stop_gradient(averages - loop), "final": m + jax.lax.stop_gradient(final - m)}
