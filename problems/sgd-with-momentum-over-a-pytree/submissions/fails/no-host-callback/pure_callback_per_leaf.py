"""Each leaf's update computed in NumPy on the host through `jax.pure_callback`, one callback per leaf
inside `jax.tree.map`: leaf by leaf, but outside the compiled program.

expect: requirements_not_met
fails: no-host-callback
"""
import jax
import numpy as np


def _host_step(p, g, v, lr, momentum):
    v = momentum * v + g
    return np.asarray(p - lr * v, np.float32), np.asarray(v, np.float32)


def sgd_momentum(params, grads, velocity, lr, momentum):
    def leaf(p, g, v):
        shape = jax.ShapeDtypeStruct(p.shape, p.dtype)
        return jax.pure_callback(_host_step, (shape, shape), p, g, v, lr, momentum)

    pairs = jax.tree.map(leaf, params, grads, velocity)
    is_pair = lambda x: isinstance(x, tuple)
    return {"params": jax.tree.map(lambda t: t[0], pairs, is_leaf=is_pair),
            "velocity": jax.tree.map(lambda t: t[1], pairs, is_leaf=is_pair)}
