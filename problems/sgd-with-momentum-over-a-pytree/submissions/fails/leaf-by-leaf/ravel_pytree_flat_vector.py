"""`jax.flatten_util.ravel_pytree`: every tree concatenated into one flat vector, updated there, and split
back. Right numbers, but each returned leaf now comes out of one concatenation of all leaves.

expect: requirements_not_met
fails: leaf-by-leaf
"""
from jax.flatten_util import ravel_pytree


def sgd_momentum(params, grads, velocity, lr, momentum):
    flat_p, unravel = ravel_pytree(params)
    flat_g, _ = ravel_pytree(grads)
    flat_v, _ = ravel_pytree(velocity)
    flat_v = momentum * flat_v + flat_g
    return {"params": unravel(flat_p - lr * flat_v), "velocity": unravel(flat_v)}
