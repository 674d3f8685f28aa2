"""flax-style: an immutable train state whose `apply_gradients` returns a new state (`replace`), with the
momentum buffer kept as the optimizer state; `functools.partial` binds the hyperparameters.

expect: accepted
fails: none
"""
import dataclasses
import functools
from typing import Any

import jax


@dataclasses.dataclass(frozen=True)
class TrainState:
    params: Any
    momentum_buffer: Any

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)

    def apply_gradients(self, *, grads, lr, momentum):
        buffer = jax.tree_util.tree_map(functools.partial(_decay_add, momentum), self.momentum_buffer, grads)
        params = jax.tree_util.tree_map(functools.partial(_step, lr), self.params, buffer)
        return self.replace(params=params, momentum_buffer=buffer)


def _decay_add(momentum, v, g):
    return momentum * v + g


def _step(lr, p, v):
    return p - lr * v


def sgd_momentum(params, grads, velocity, lr, momentum):
    state = TrainState(params=params, momentum_buffer=velocity)
    state = state.apply_gradients(grads=grads, lr=lr, momentum=momentum)
    return {"params": state.params, "velocity": state.momentum_buffer}
