"""The flat-vector update plus zero times the tree-mapped one: the tree map is decorative.

expect: requirements_not_met
fails: leaf-by-leaf
"""
import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree


def _step(p, g, m, v, t, lr, b1, b2, eps, wd):
    m = (1 - b1) * g + b1 * m
    v = (1 - b2) * g * g + b2 * v
    return p - lr * ((m / (1 - b1 ** t)) / (jnp.sqrt(v / (1 - b2 ** t)) + eps) + wd * p), m, v


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    hp = (t, lr, b1, b2, eps, weight_decay)
    mapped = jax.tree.map(lambda p, g, m, v: _step(p, g, m, v, *hp)[0], params, grads, mu, nu)
    flat_p, unravel = ravel_pytree(params)
    p, m, v = _step(flat_p, ravel_pytree(grads)[0], ravel_pytree(mu)[0], ravel_pytree(nu)[0], *hp)
    new_params = jax.tree.map(lambda a, b: a + 0.0 * b, unravel(p), mapped)
    return {"params": new_params, "mu": unravel(m), "nu": unravel(v), "count": t}
