"""Written the way optax keeps an EMA's state (optax is not installed here): a NamedTuple of the step count
and the average, updated by one function and carried through `lax.scan`. Without debiasing the count
changes nothing in the average; carrying it beside the average is allowed.

expect: accepted
fails: none
"""
from typing import NamedTuple

import jax
import jax.numpy as jnp


class EmaState(NamedTuple):
    count: jax.Array
    ema: jax.Array


def update_moment(update, moment, decay):
    return (1 - decay) * update + decay * moment


def ema(x, init, decay):
    def update_fn(state, update):
        new = EmaState(count=state.count + 1, ema=update_moment(update, state.ema, decay))
        return new, new.ema

    state, averages = jax.lax.scan(update_fn, EmaState(jnp.zeros([], jnp.int32), init), x)
    return {"averages": averages, "final": state.ema}
