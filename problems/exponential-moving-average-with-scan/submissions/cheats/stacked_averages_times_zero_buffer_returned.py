"""The scan stacks the per-step averages, but they are multiplied by zero; what is returned is a (T, D)
buffer the scan also carries and writes a row into at every step.

expect: requirements_not_met
fails: average-in-carry
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(carry, inputs):
        m, buf = carry
        t, row = inputs
        m = decay * m + (1.0 - decay) * row
        return (m, jax.lax.dynamic_update_slice(buf, m[None], (t, 0))), m

    steps = x.shape[0]
    (final, buf), stacked = jax.lax.scan(step, (init, jnp.zeros_like(x)), (jnp.arange(steps), x))
    return {"averages": buf + 0.0 * stacked, "final": final}
