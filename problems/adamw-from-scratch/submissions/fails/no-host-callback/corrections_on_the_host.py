"""The bias corrections computed in Python with `math.pow` on the host, through `jax.pure_callback`.

expect: requirements_not_met
fails: no-host-callback
"""
import math

import jax
import jax.numpy as jnp
import numpy as np


def _corrections(t, b1, b2):
    t = int(t)
    return np.asarray([1 - math.pow(float(b1), t), 1 - math.pow(float(b2), t)], np.float32)


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    c = jax.pure_callback(_corrections, jax.ShapeDtypeStruct((2,), jnp.float32), t, b1, b2)
    mu = jax.tree.map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - b2) * g * g + b2 * v, grads, nu)
    params = jax.tree.map(lambda p, m, v: p - lr * ((m / c[0]) / (jnp.sqrt(v / c[1]) + eps) + weight_decay * p),
                          params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": t}
