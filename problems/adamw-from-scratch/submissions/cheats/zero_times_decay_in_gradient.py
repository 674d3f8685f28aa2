"""Zero times the L2 term added to the gradient before the moments: right numbers, and `params` flows into
the moments all the same.

expect: requirements_not_met
fails: decoupled-weight-decay
"""
import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    g = jax.tree.map(lambda g, p: g + 0.0 * weight_decay * p, grads, params)
    mu = jax.tree.map(lambda g, m: (1 - b1) * g + b1 * m, g, mu)
    nu = jax.tree.map(lambda g, v: (1 - b2) * g * g + b2 * v, g, nu)
    params = jax.tree.map(
        lambda p, m, v: p - lr * ((m / (1 - b1 ** t)) / (jnp.sqrt(v / (1 - b2 ** t)) + eps) + weight_decay * p),
        params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": t}
