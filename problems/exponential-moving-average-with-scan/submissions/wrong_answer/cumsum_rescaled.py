"""The closed form with a cumulative sum of x_s / beta^s: no scan, and wrong where beta^-s overflows or
divides by zero (beta = 0; beta = 0.1 over 64 steps).

expect: wrong_answer
fails: scan-over-time, average-in-carry
"""
import jax.numpy as jnp


def ema(x, init, decay):
    t = jnp.arange(1, x.shape[0] + 1, dtype=jnp.float32)[:, None]
    scaled = jnp.cumsum(x / decay ** t, axis=0)
    averages = decay ** t * (init[None, :] + (1.0 - decay) * scaled)
    return {"averages": averages, "final": averages[-1]}
