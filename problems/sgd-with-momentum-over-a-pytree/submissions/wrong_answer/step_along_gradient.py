"""The velocity is updated but the parameters step along the raw gradient: plain SGD with a momentum
buffer nobody reads. Right on the first step only.

expect: wrong_answer
fails: none
"""
import jax


def sgd_momentum(params, grads, velocity, lr, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, g: p - lr * g, params, grads)
    return {"params": new_params, "velocity": new_velocity}
