"""The step is scaled by a factor that underflows (`lr * 1e-30 * 1e-20` is 0 in float32), so the parameters
never move. The structure is right (each leaf from its own place, no callback): both rows hold; only the
numbers are wrong.

expect: wrong_answer
fails: none
"""
import jax


def sgd_momentum(params, grads, velocity, lr, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - (lr * 1e-30 * 1e-20) * v, params, new_velocity)
    return {"params": new_params, "velocity": new_velocity}
