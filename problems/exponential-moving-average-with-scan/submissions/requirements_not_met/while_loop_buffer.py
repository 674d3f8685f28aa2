"""A `lax.while_loop` over the steps, writing each average into a preallocated buffer.

expect: requirements_not_met
fails: scan-over-time, average-in-carry
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def cond(state):
        return state[0] < x.shape[0]

    def body(state):
        t, m, out = state
        m = decay * m + (1.0 - decay) * x[t]
        return t + 1, m, out.at[t].set(m)

    _, final, averages = jax.lax.while_loop(cond, body, (0, init, jnp.zeros_like(x)))
    return {"averages": averages, "final": final}
