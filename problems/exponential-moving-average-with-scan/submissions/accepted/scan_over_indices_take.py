"""Scans over the step indices and reads each row with `jnp.take`; the carry is a (1, D) row.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(m, t):
        row = jnp.take(x, t, axis=0)[None, :]
        m = decay * m + (1.0 - decay) * row
        return m, m[0]

    final, averages = jax.lax.scan(step, init[None, :], jnp.arange(x.shape[0]))
    return {"averages": averages, "final": final.reshape(-1)}
