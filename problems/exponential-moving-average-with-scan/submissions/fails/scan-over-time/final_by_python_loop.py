"""The scan stacks the averages; the final average is recomputed by a Python loop over the rows.

expect: requirements_not_met
fails: scan-over-time
"""
import jax


def ema(x, init, decay):
    def step(m, row):
        m = decay * m + (1.0 - decay) * row
        return m, m

    _, averages = jax.lax.scan(step, init, x)
    final = init
    for t in range(x.shape[0]):
        final = decay * final + (1.0 - decay) * x[t]
    return {"averages": averages, "final": final}
