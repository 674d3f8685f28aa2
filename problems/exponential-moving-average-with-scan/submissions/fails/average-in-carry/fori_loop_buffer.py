"""Fori loop buffer.

expect: requirements_not_met
fails: average-in-carry
"""
# Right numbers with lax.fori_loop, which turns into a scan here, but it fills a preallocated buffer.
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def body(t, carry):
        m, out = carry
        m = decay * m + (1.0 - decay) * x[t]
        return m, out.at[t].set(m)

    final, averages = jax.lax.fori_loop(0, x.shape[0], body, (init, jnp.zeros_like(x)))
    return {"averages": averages, "final": final}
