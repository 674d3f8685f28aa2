"""equinox-style: updates computed with `jax.tree_util.tree_map` (with an `is_leaf` that would skip `None`
leaves), applied with an `apply_updates` helper, and a jitted inner step.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def apply_updates(model, updates):
    return jax.tree_util.tree_map(lambda m, u: m if u is None else m + u, model, updates,
                                  is_leaf=lambda x: x is None)


@jax.jit
def _momentum_step(grads, velocity, lr, momentum):
    velocity = jax.tree_util.tree_map(lambda v, g: momentum * v + g, velocity, grads)
    updates = jax.tree_util.tree_map(lambda v: -lr * v, velocity)
    return updates, velocity


def sgd_momentum(params, grads, velocity, lr, momentum):
    updates, new_velocity = _momentum_step(grads, velocity, jnp.float32(lr), jnp.float32(momentum))
    return {"params": apply_updates(params, updates), "velocity": new_velocity}
