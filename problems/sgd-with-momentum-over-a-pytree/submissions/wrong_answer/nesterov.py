"""Nesterov momentum (`optax.sgd(..., nesterov=True)`): the step goes along g + mu * v', not along v'.

expect: wrong_answer
fails: none
"""
import jax


def sgd_momentum(params, grads, velocity, lr, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, g, v: p - lr * (g + momentum * v), params, grads, new_velocity)
    return {"params": new_params, "velocity": new_velocity}
