"""flax-style: a frozen train state with an `opt_state` (count, mu, nu) and `apply_gradients` returning a
new state with `replace`; hyperparameters bound with `functools.partial`.

expect: accepted
fails: none
"""
import dataclasses
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp


class AdamState(NamedTuple):
    count: Any
    mu: Any
    nu: Any


@dataclasses.dataclass(frozen=True)
class TrainState:
    params: Any
    opt_state: AdamState

    def replace(self, **kw):
        return dataclasses.replace(self, **kw)

    def apply_gradients(self, grads, hp):
        s = self.opt_state
        count = s.count + 1
        mu = jax.tree_util.tree_map(functools.partial(_ema, hp["b1"]), s.mu, grads)
        nu = jax.tree_util.tree_map(functools.partial(_ema, hp["b2"]), s.nu, jax.tree_util.tree_map(jnp.square, grads))
        c1, c2 = 1 - hp["b1"] ** count, 1 - hp["b2"] ** count
        params = jax.tree_util.tree_map(
            lambda p, m, v: p - hp["lr"] * (m / c1 / (jnp.sqrt(v / c2) + hp["eps"]) + hp["wd"] * p),
            self.params, mu, nu)
        return self.replace(params=params, opt_state=AdamState(count, mu, nu))


def _ema(decay, old, new):
    return decay * old + (1 - decay) * new


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    state = TrainState(params, AdamState(count, mu, nu))
    hp = {"lr": lr, "b1": b1, "b2": b2, "eps": eps, "wd": weight_decay}
    state = state.apply_gradients(grads, hp)
    return {"params": state.params, "mu": state.opt_state.mu, "nu": state.opt_state.nu,
            "count": state.opt_state.count}
