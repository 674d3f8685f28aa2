"""The right update in JAX, plus zero times a NumPy update fetched with `jax.pure_callback`: the callback's
result still flows into the returned values (the rule is about what flows in, multiplied by zero or not).

expect: requirements_not_met
fails: no-host-callback
"""
import jax
import numpy as np


def sgd_momentum(params, grads, velocity, lr, momentum):
    def leaf(p, g, v):
        host = jax.pure_callback(lambda a, b, c: np.asarray(a - 0.1 * b, np.float32),
                                 jax.ShapeDtypeStruct(p.shape, p.dtype), p, g, v)
        new_v = momentum * v + g
        return (p - lr * new_v + 0.0 * host, new_v)

    pairs = jax.tree.map(leaf, params, grads, velocity)
    is_pair = lambda x: isinstance(x, tuple)
    return {"params": jax.tree.map(lambda t: t[0], pairs, is_leaf=is_pair),
            "velocity": jax.tree.map(lambda t: t[1], pairs, is_leaf=is_pair)}
