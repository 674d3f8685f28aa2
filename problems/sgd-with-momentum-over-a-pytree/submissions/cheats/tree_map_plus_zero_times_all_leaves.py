"""Leaf by leaf with `jax.tree.map`, plus zero times the sum of every gradient leaf added to each result:
the numbers are right, but every leaf now depends on every other place.

expect: requirements_not_met
fails: leaf-by-leaf
"""
import jax
import jax.numpy as jnp


def sgd_momentum(params, grads, velocity, lr, momentum):
    total = sum(jnp.sum(g) for g in jax.tree.leaves(grads))
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g + 0.0 * total, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - lr * v, params, new_velocity)
    return {"params": new_params, "velocity": new_velocity}
