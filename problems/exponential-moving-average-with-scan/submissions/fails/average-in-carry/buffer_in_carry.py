"""Buffer in carry.

expect: requirements_not_met
fails: average-in-carry
"""
# Right numbers, but the scan carries a (T, D) output buffer and writes one row into it per step.
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(carry, inputs):
        m, out = carry
        t, row = inputs
        m = decay * m + (1.0 - decay) * row
        return (m, out.at[t].set(m)), None

    steps = x.shape[0]
    (final, averages), _ = jax.lax.scan(step, (init, jnp.zeros_like(x)), (jnp.arange(steps), x))
    return {"averages": averages, "final": final}
