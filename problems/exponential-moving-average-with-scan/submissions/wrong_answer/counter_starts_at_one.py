"""Carries a step counter beside the average, as optax's EMA state does, but starts it at 1 and reads row
`x[t]` with it: every step reads the next row, and the last one reads past the end, which JAX clamps to the
last row instead of raising. Every case with T >= 2 catches it; T = 1 cannot (x[1] clamps to x[0]).

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(carry, _):
        t, m = carry
        m = decay * m + (1 - decay) * x[t]
        return (t + 1, m), m

    (_, final), averages = jax.lax.scan(step, (jnp.int32(1), init), None, length=x.shape[0])
    return {"averages": averages, "final": final}
