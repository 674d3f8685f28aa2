"""optax's own shape: `scale_by_adam` (moments, `bias_correction` under `jax.jit(inline=True)`, count
incremented), `add_decayed_weights` and `scale_by_learning_rate` chained, then `apply_updates`.

expect: accepted
fails: none
"""
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp


class ScaleByAdamState(NamedTuple):
    count: Any
    mu: Any
    nu: Any


def update_moment(updates, moments, decay, order):
    return jax.tree_util.tree_map(lambda g, t: (1 - decay) * (g ** order) + decay * t, updates, moments)


@functools.partial(jax.jit, inline=True)
def bias_correction(moment, decay, count):
    bias_correction_ = 1 - decay ** count
    return jax.tree_util.tree_map(lambda t: t / bias_correction_.astype(t.dtype), moment)


def scale_by_adam(b1, b2, eps, eps_root=0.0):
    def update_fn(updates, state, params=None):
        mu = update_moment(updates, state.mu, b1, 1)
        nu = update_moment(updates, state.nu, b2, 2)
        count_inc = state.count + jnp.asarray(1, jnp.int32)
        mu_hat = bias_correction(mu, b1, count_inc)
        nu_hat = bias_correction(nu, b2, count_inc)
        updates = jax.tree_util.tree_map(lambda m, v: m / (jnp.sqrt(v + eps_root) + eps), mu_hat, nu_hat)
        return updates, ScaleByAdamState(count=count_inc, mu=mu, nu=nu)
    return update_fn


def add_decayed_weights(weight_decay):
    def update_fn(updates, state, params=None):
        return jax.tree_util.tree_map(lambda g, p: g + weight_decay * p, updates, params), state
    return update_fn


def scale_by_learning_rate(learning_rate):
    def update_fn(updates, state, params=None):
        return jax.tree_util.tree_map(lambda g: -learning_rate * g, updates), state
    return update_fn


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    updates, state = scale_by_adam(b1, b2, eps)(grads, ScaleByAdamState(jnp.asarray(count, jnp.int32), mu, nu))
    updates, _ = add_decayed_weights(weight_decay)(updates, None, params)
    updates, _ = scale_by_learning_rate(lr)(updates, None)
    new_params = jax.tree_util.tree_map(lambda p, u: p + u, params, updates)
    return {"params": new_params, "mu": state.mu, "nu": state.nu, "count": state.count}
