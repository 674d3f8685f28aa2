"""Per feature vmap.

expect: accepted
fails: none
"""
# One scalar EMA per feature, scanned over time, vmapped over the D features.
import jax
import jax.numpy as jnp


def _one_feature(column, start, decay):
    def step(m, value):
        m = decay * m + (1.0 - decay) * value
        return m, m

    return jax.lax.scan(step, start, column)


def ema(x, init, decay):
    final, averages = jax.vmap(_one_feature, in_axes=(1, 0, None), out_axes=(0, 1))(x, init, decay)
    return {"averages": averages, "final": final}
