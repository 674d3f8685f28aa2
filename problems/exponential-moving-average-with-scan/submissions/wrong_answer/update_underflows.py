"""The step's correction is scaled by a factor that underflows to zero, so the average never leaves `init`.
The scan is right (one scan over the rows, the average in its carry, its stacked outputs returned): both rows
hold, and the probe's moves of the scan's results do reach the outputs. Only the numbers are wrong.

expect: wrong_answer
fails: none
"""
import jax


def ema(x, init, decay):
    def step(average, row):
        average = average + (1.0 - decay) * (row - average) * 1e-30 * 1e-20
        return average, average

    final, averages = jax.lax.scan(step, init, x)
    return {"averages": averages, "final": final}
