"""The parameters step along the old velocity v, before it is updated.

expect: wrong_answer
fails: none
"""
import jax


def sgd_momentum(params, grads, velocity, lr, momentum):
    new_params = jax.tree.map(lambda p, v: p - lr * v, params, velocity)
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    return {"params": new_params, "velocity": new_velocity}
