"""`lax.scan(..., reverse=True)` over the rows in reverse order: it walks them from the last stored row
(x_1) to the first (x_T), so the recurrence runs forward in time; the stacked outputs come back in the
reversed order and are flipped.

expect: accepted
fails: none
"""
import jax


def ema(x, init, decay):
    def step(m, row):
        m = decay * m + (1.0 - decay) * row
        return m, m

    final, backwards = jax.lax.scan(step, init, x[::-1], reverse=True)
    return {"averages": backwards[::-1], "final": final}
