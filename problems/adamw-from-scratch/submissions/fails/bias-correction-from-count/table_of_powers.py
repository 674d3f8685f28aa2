"""A table of b ** s for every step s up to the largest count, indexed by `count`: right numbers, and a
million-entry array built at every step.

expect: requirements_not_met
fails: bias-correction-from-count
"""
import jax
import jax.numpy as jnp

MAX_STEPS = 1_000_001


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    steps = jnp.arange(1, MAX_STEPS + 1, dtype=jnp.int32)
    c1 = (1 - b1 ** steps)[count]
    c2 = (1 - b2 ** steps)[count]
    mu = jax.tree.map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - b2) * g * g + b2 * v, grads, nu)
    params = jax.tree.map(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + weight_decay * p),
                          params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": count + 1}
