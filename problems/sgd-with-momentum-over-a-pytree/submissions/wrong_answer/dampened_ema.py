"""An exponential moving average, v' = mu * v + (1 - mu) * g (PyTorch's dampening = momentum), instead of
optax's trace v' = mu * v + g.

expect: wrong_answer
fails: none
"""
import jax


def sgd_momentum(params, grads, velocity, lr, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + (1.0 - momentum) * g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - lr * v, params, new_velocity)
    return {"params": new_params, "velocity": new_velocity}
