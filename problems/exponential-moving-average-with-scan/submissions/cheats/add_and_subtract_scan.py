"""The scan's averages added and subtracted again next to averages from `jax.lax.associative_scan`.

expect: requirements_not_met
fails: scan-over-time, average-in-carry
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(m, row):
        m = decay * m + (1.0 - decay) * row
        return m, m

    final, averages = jax.lax.scan(step, init, x)

    def compose(first, second):
        return first[0] * second[0], second[0] * first[1] + second[1]

    scale, offset = jax.lax.associative_scan(compose, (jnp.full_like(x, decay), (1.0 - decay) * x))
    other = scale * init[None, :] + offset
    return {"averages": other + averages - averages, "final": other[-1] + final - final}
