"""Lerp step function.

expect: accepted
fails: none
"""
# The update written as a step toward the new row, m + (1 - beta)(x - m), with the step defined at top level.
import jax


def _step(decay, average, row):
    new = average + (1.0 - decay) * (row - average)
    return new, new


def ema(x, init, decay):
    final, averages = jax.lax.scan(lambda m, row: _step(decay, m, row), init, x)
    return {"averages": averages, "final": final}
