"""Adam's bias correction, m_t / (1 - beta^t), which this problem does not ask for.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(carry, row):
        m, power = carry
        m = decay * m + (1.0 - decay) * row
        power = power * decay
        return (m, power), m / (1.0 - power)

    (final, power), averages = jax.lax.scan(step, (init, jnp.float32(1.0)), x)
    return {"averages": averages, "final": final / (1.0 - power)}
