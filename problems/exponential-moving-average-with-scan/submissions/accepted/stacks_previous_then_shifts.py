"""The step stacks the average it was given; the returned averages are those shifted by one, with the final
carry appended.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(m, row):
        return decay * m + (1.0 - decay) * row, m

    final, previous = jax.lax.scan(step, init, x)
    averages = jnp.concatenate([previous[1:], final[None, :]], axis=0)
    return {"averages": averages, "final": final}
