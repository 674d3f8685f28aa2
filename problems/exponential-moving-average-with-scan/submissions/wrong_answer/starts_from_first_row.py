"""Ignores `init` and starts the average at the first row (as pandas' `ewm(adjust=False)` does).

expect: wrong_answer
fails: none
"""
import jax


def ema(x, init, decay):
    def step(m, row):
        m = decay * m + (1.0 - decay) * row
        return m, m

    final, averages = jax.lax.scan(step, x[0], x)
    return {"averages": averages, "final": final}
