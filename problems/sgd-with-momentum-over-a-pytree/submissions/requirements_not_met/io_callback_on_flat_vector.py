"""The whole update done in NumPy through `jax.experimental.io_callback` on one flattened vector: neither
leaf by leaf nor inside the program.

expect: requirements_not_met
fails: leaf-by-leaf, no-host-callback
"""
import jax
import numpy as np
from jax.experimental import io_callback
from jax.flatten_util import ravel_pytree


def sgd_momentum(params, grads, velocity, lr, momentum):
    flat_p, unravel = ravel_pytree(params)
    flat_g, flat_v = ravel_pytree(grads)[0], ravel_pytree(velocity)[0]

    def host(p, g, v, lr, momentum):
        v = momentum * v + g
        return np.asarray(p - lr * v, np.float32), np.asarray(v, np.float32)

    shape = jax.ShapeDtypeStruct(flat_p.shape, flat_p.dtype)
    new_p, new_v = io_callback(host, (shape, shape), flat_p, flat_g, flat_v, lr, momentum)
    return {"params": unravel(new_p), "velocity": unravel(new_v)}
