"""flax style: a small module object holding the decay, with a jitted step method scanned over time.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


class EMA:
    def __init__(self, decay):
        self.decay = decay

    def step(self, average, row):
        new = jnp.asarray(self.decay * average + (1 - self.decay) * row, jnp.float32)
        return new, new

    def __call__(self, init, xs):
        return jax.lax.scan(jax.jit(self.step), init, xs)


def ema(x, init, decay):
    final, averages = EMA(decay)(init, x)
    return dict(averages=averages, final=final)
