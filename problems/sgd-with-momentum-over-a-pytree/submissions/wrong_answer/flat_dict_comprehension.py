"""A dict comprehension over the top-level keys: right for a flat dict of arrays, and it raises on the
hidden trees that nest dicts and lists or are a single array.

expect: runtime_error
fails: leaf-by-leaf, no-host-callback
"""


def sgd_momentum(params, grads, velocity, lr, momentum):
    new_velocity = {k: momentum * velocity[k] + grads[k] for k in params}
    new_params = {k: params[k] - lr * new_velocity[k] for k in params}
    return {"params": new_params, "velocity": new_velocity}
