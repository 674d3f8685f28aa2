"""The reference's shape: one `jax.tree.map` for the velocity, one for the parameters.

expect: accepted
fails: none
"""
import jax


def sgd_momentum(params, grads, velocity, lr, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - lr * v, params, new_velocity)
    return {"params": new_params, "velocity": new_velocity}
