"""The naive "before": a Python loop over the T steps, so the traced program holds one copy of the update
per step and grows with the sequence length."""
import jax.numpy as jnp


def ema(x, init, decay):
    average, averages = init, []
    for t in range(x.shape[0]):
        average = decay * average + (1.0 - decay) * x[t]
        averages.append(average)
    return {"averages": jnp.stack(averages), "final": average}
