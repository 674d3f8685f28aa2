"""Swapped weights.

expect: wrong_answer
fails: none
"""
# Gives the new row the weight beta and the old average 1 - beta: the roles are swapped.
import jax


def ema(x, init, decay):
    def step(m, row):
        m = (1.0 - decay) * m + decay * row
        return m, m

    final, averages = jax.lax.scan(step, init, x)
    return {"averages": averages, "final": final}
