"""The scan computes everything, but a T-by-T matrix of weights is also built (and added times zero).

expect: requirements_not_met
fails: scan-over-time
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(m, row):
        m = decay * m + (1.0 - decay) * row
        return m, m

    final, averages = jax.lax.scan(step, init, x)
    t = jnp.arange(x.shape[0], dtype=jnp.float32)
    weights = decay ** jnp.abs(t[:, None] - t[None, :])
    return {"averages": averages + 0.0 * (weights @ x), "final": final}
