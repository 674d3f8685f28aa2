"""`jax.tree_util.tree_map_with_path`, as code that logs or masks per parameter name does; the path is
only read, never assumed.

expect: accepted
fails: none
"""
import jax


def sgd_momentum(params, grads, velocity, lr, momentum):
    names = []

    def new_v(path, v, g):
        names.append(jax.tree_util.keystr(path))
        return momentum * v + g

    new_velocity = jax.tree_util.tree_map_with_path(new_v, velocity, grads)
    new_params = jax.tree_util.tree_map_with_path(lambda path, p, v: p - lr * v, params, new_velocity)
    return {"params": new_params, "velocity": new_velocity}
