import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(average, row):
        average = decay * average + (1.0 - decay) * row
        return average, average

    final, averages = jax.lax.scan(step, init, x)
    return {"averages": averages, "final": final}
