"""The whole AdamW step in NumPy on one flattened vector, through `io_callback`, with the powers from
`math.pow`: not leaf by leaf, not inside the program, and the grader cannot see whether the decay enters
the moments inside the callback.

expect: requirements_not_met
fails: leaf-by-leaf, decoupled-weight-decay, no-host-callback
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback
from jax.flatten_util import ravel_pytree


def _host(p, g, m, v, t, lr, b1, b2, eps, wd):
    m = (1 - b1) * g + b1 * m
    v = (1 - b2) * g * g + b2 * v
    c1, c2 = np.float32(math.pow(float(b1), int(t))), np.float32(math.pow(float(b2), int(t)))
    p = p - lr * ((m / (1 - c1)) / (np.sqrt(v / (1 - c2)) + eps) + wd * p)
    return [np.asarray(x, np.float32) for x in (p, m, v)]


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    flat_p, unravel = ravel_pytree(params)
    shape = jax.ShapeDtypeStruct(flat_p.shape, jnp.float32)
    t = count + 1
    p, m, v = io_callback(_host, [shape] * 3, flat_p, ravel_pytree(grads)[0], ravel_pytree(mu)[0],
                          ravel_pytree(nu)[0], t, lr, b1, b2, eps, weight_decay)
    return {"params": unravel(p), "mu": unravel(m), "nu": unravel(v), "count": t}
