"""The "classical" form with the learning rate inside the velocity, v' = mu * v - lr * g and p' = p + v':
a different velocity from the one the problem defines (and different steps once lr changes).

expect: wrong_answer
fails: none
"""
import jax


def sgd_momentum(params, grads, velocity, lr, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v - lr * g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p + v, params, new_velocity)
    return {"params": new_params, "velocity": new_velocity}
