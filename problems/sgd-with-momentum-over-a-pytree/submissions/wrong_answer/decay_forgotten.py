"""The velocity accumulates without decay, v' = v + g (the momentum coefficient is never applied).

expect: wrong_answer
fails: none
"""
import jax


def sgd_momentum(params, grads, velocity, lr, momentum):
    new_velocity = jax.tree.map(lambda v, g: v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - lr * v, params, new_velocity)
    return {"params": new_params, "velocity": new_velocity}
