"""A step function that prints its running average while it runs (`jax.debug.print`, as one debugs a
scan): the print only reads values; the update is JAX's own arithmetic, written as optax's
`incremental_update` spells it.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(average, row):
        average = jax.tree_util.tree_map(lambda new, old: decay * old + (1.0 - decay) * new, row, average)
        jax.debug.print("average {a}", a=average)
        return average, average

    final, averages = jax.lax.scan(step, init, x)
    return {"averages": averages, "final": final}
