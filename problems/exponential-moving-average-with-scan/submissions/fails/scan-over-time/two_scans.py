"""Two scans: one stacks the averages, a second walks the sequence again for the final average.

expect: requirements_not_met
fails: scan-over-time
"""
import jax


def ema(x, init, decay):
    def step(m, row):
        m = decay * m + (1.0 - decay) * row
        return m, m

    _, averages = jax.lax.scan(step, init, x)
    final, _ = jax.lax.scan(step, init, x)
    return {"averages": averages, "final": final}
