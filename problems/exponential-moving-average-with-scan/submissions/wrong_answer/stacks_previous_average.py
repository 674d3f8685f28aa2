"""Off by one: the step outputs the average *before* the update, so `averages` is m_0..m_{T-1}.

expect: wrong_answer
fails: none
"""
import jax


def ema(x, init, decay):
    def step(m, row):
        return decay * m + (1.0 - decay) * row, m

    final, averages = jax.lax.scan(step, init, x)
    return {"averages": averages, "final": final}
