"""optax-style: a `GradientTransformation` of `init`/`update`, `trace` then `scale_by_learning_rate`
chained, and `apply_updates` adding the updates to the parameters (what `optax.sgd(lr, momentum)` is).

expect: accepted
fails: none
"""
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp


class GradientTransformation(NamedTuple):
    init: Callable[[Any], Any]
    update: Callable[..., tuple[Any, Any]]


class TraceState(NamedTuple):
    trace: Any


def trace(decay) -> GradientTransformation:
    def init_fn(params):
        return TraceState(trace=jax.tree_util.tree_map(jnp.zeros_like, params))

    def update_fn(updates, state, params=None):
        del params
        new_trace = jax.tree_util.tree_map(lambda g, t: g + decay * t, updates, state.trace)
        return new_trace, TraceState(trace=new_trace)

    return GradientTransformation(init_fn, update_fn)


def scale_by_learning_rate(learning_rate) -> GradientTransformation:
    def update_fn(updates, state, params=None):
        del params
        return jax.tree_util.tree_map(lambda u: -learning_rate * u, updates), state

    return GradientTransformation(lambda params: (), update_fn)


def chain(*transforms) -> GradientTransformation:
    def init_fn(params):
        return tuple(t.init(params) for t in transforms)

    def update_fn(updates, state, params=None):
        new_state = []
        for t, s in zip(transforms, state):
            updates, s = t.update(updates, s, params)
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformation(init_fn, update_fn)


def apply_updates(params, updates):
    return jax.tree_util.tree_map(lambda p, u: jnp.asarray(p + u).astype(jnp.asarray(p).dtype), params, updates)


def sgd_momentum(params, grads, velocity, lr, momentum):
    optimizer = chain(trace(decay=momentum), scale_by_learning_rate(lr))
    state = (TraceState(trace=velocity), ())
    updates, (trace_state, _) = optimizer.update(grads, state, params)
    return {"params": apply_updates(params, updates), "velocity": trace_state.trace}
