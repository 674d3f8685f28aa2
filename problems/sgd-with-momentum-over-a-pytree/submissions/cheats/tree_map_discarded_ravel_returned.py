"""The tree-mapped update is computed and thrown away; what is returned comes from one flat vector.

expect: requirements_not_met
fails: leaf-by-leaf
"""
import jax
from jax.flatten_util import ravel_pytree


def sgd_momentum(params, grads, velocity, lr, momentum):
    unused = jax.tree.map(lambda p, g, v: p - lr * (momentum * v + g), params, grads, velocity)
    flat_p, unravel = ravel_pytree(params)
    flat_v = momentum * ravel_pytree(velocity)[0] + ravel_pytree(grads)[0]
    return {"params": unravel(flat_p - lr * flat_v), "velocity": unravel(flat_v)}
