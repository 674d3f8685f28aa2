"""`jnp.where(False, scan, closed_form)`: the scan is present, the T-by-T closed form is returned.

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
    steps = x.shape[0]
    t = jnp.arange(1, steps + 1, dtype=jnp.float32)
    lag = t[:, None] - t[None, :]
    weights = jnp.where(lag >= 0, (1.0 - decay) * decay ** jnp.maximum(lag, 0.0), 0.0)
    closed = weights @ x + (decay ** t)[:, None] * init[None, :]
    use_scan = jnp.zeros((), bool)
    return {"averages": jnp.where(use_scan, averages, closed), "final": jnp.where(use_scan, final, closed[-1])}
