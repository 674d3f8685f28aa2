"""`jax.lax.associative_scan` on affine maps (a, b) -> m = a * m + b: right numbers in log T rounds, but
it is not one `lax.scan` and nothing carries the average from step to step.

expect: requirements_not_met
fails: scan-over-time, average-in-carry
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    a = jnp.full_like(x, decay)
    b = (1.0 - decay) * x

    def compose(first, second):
        a1, b1 = first
        a2, b2 = second
        return a1 * a2, a2 * b1 + b2

    scale, offset = jax.lax.associative_scan(compose, (a, b))
    averages = scale * init[None, :] + offset
    return {"averages": averages, "final": averages[-1]}
