"""The flat-vector answer plus zero times the tree-mapped one: the tree map is there, decorative.

expect: requirements_not_met
fails: leaf-by-leaf
"""
import jax
from jax.flatten_util import ravel_pytree


def sgd_momentum(params, grads, velocity, lr, momentum):
    mapped_v = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    mapped_p = jax.tree.map(lambda p, v: p - lr * v, params, mapped_v)
    flat_p, unravel = ravel_pytree(params)
    flat_v = momentum * ravel_pytree(velocity)[0] + ravel_pytree(grads)[0]
    flat_new_p, flat_new_v = unravel(flat_p - lr * flat_v), unravel(flat_v)
    return {"params": jax.tree.map(lambda a, b: a + 0.0 * b, flat_new_p, mapped_p),
            "velocity": jax.tree.map(lambda a, b: a + 0.0 * b, flat_new_v, mapped_v)}
