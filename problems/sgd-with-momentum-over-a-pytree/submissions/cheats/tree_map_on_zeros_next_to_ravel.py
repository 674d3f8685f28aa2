"""`jax.tree.map` applied to something irrelevant (zeros shaped like the params), added to a flat-vector
update that does the real work.

expect: requirements_not_met
fails: leaf-by-leaf
"""
import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree


def sgd_momentum(params, grads, velocity, lr, momentum):
    zeros = jax.tree.map(jnp.zeros_like, params)
    decoy = jax.tree.map(lambda z: momentum * z, zeros)
    flat_p, unravel = ravel_pytree(params)
    flat_v = momentum * ravel_pytree(velocity)[0] + ravel_pytree(grads)[0]
    new_p, new_v = unravel(flat_p - lr * flat_v), unravel(flat_v)
    return {"params": jax.tree.map(jnp.add, new_p, decoy), "velocity": jax.tree.map(jnp.add, new_v, decoy)}
