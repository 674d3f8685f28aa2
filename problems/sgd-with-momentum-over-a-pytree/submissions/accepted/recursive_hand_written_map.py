"""A hand-written recursive map over dicts, lists and tuples: it reads the structure from the data (no key is
assumed), so it is as general as `jax.tree.map` for these trees.

expect: accepted
fails: none
"""
import jax.numpy as jnp


def _map(fn, *trees):
    first = trees[0]
    if isinstance(first, dict):
        return {k: _map(fn, *(t[k] for t in trees)) for k in first}
    if isinstance(first, (list, tuple)):
        return type(first)(_map(fn, *items) for items in zip(*trees))
    return fn(*trees)


def sgd_momentum(params, grads, velocity, lr, momentum):
    new_velocity = _map(lambda v, g: jnp.add(jnp.multiply(momentum, v), g), velocity, grads)
    new_params = _map(lambda p, v: jnp.subtract(p, jnp.multiply(lr, v)), params, new_velocity)
    return {"params": new_params, "velocity": new_velocity}
