"""Carries a step counter beside the average, as TensorFlow's `ExponentialMovingAverage(num_updates=...)`
does, and lets it warm the decay up: the decay used at step t is min(decay, (1 + t) / (10 + t)), so the early
averages follow the rows faster than the statement's fixed decay. Every case with a decay above 0.1 catches
it at its first step (decay 0 and 0.1 cannot: min keeps the fixed decay there).

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(carry, row):
        count, m = carry
        d = jnp.minimum(decay, (1.0 + count) / (10.0 + count))
        m = d * m + (1.0 - d) * row
        return (count + 1.0, m), m

    (_, final), averages = jax.lax.scan(step, (jnp.zeros([], jnp.float32), init), x)
    return {"averages": averages, "final": final}
