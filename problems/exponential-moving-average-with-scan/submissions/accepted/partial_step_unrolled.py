"""The step bound to `decay` with `functools.partial`, the scan unrolled four steps at a time.

expect: accepted
fails: none
"""
import functools

import jax


def _step(decay, average, row):
    average = decay * average + (1.0 - decay) * row
    return average, average


def ema(x, init, decay):
    final, averages = jax.lax.scan(functools.partial(_step, decay), init, x, unroll=4)
    return {"averages": averages, "final": final}
