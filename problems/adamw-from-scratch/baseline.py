"""The naive "before" the insight compares with (insight.toml's [baseline]): parameters, gradients and
moments flattened into vectors with `ravel_pytree` (as optimizers that keep a flat state do), updated
there and split back. Same entry function and signature as reference.py."""
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    p, unravel = ravel_pytree(params)
    g, m, v = ravel_pytree(grads)[0], ravel_pytree(mu)[0], ravel_pytree(nu)[0]
    t = count + 1
    m = (1 - b1) * g + b1 * m
    v = (1 - b2) * g * g + b2 * v
    p = p - lr * ((m / (1 - b1 ** t)) / (jnp.sqrt(v / (1 - b2 ** t)) + eps) + weight_decay * p)
    return {"params": unravel(p), "mu": unravel(m), "nu": unravel(v), "count": t}
