"""optax style: a pytree carry `{"ema": m}` updated with an `incremental_update` helper
(new * step_size + old * (1 - step_size), as `optax.incremental_update` is written) over `jax.tree_util`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def incremental_update(new_tensors, old_tensors, step_size):
    return jax.tree_util.tree_map(lambda new, old: step_size * new + (1.0 - step_size) * old,
                                  new_tensors, old_tensors)


def ema(x, init, decay):
    def step(state, row):
        state = {"ema": incremental_update(row, state["ema"], 1.0 - decay)}
        return state, state["ema"]

    state, averages = jax.lax.scan(step, {"ema": init}, x)
    return {"averages": averages, "final": state["ema"]}
