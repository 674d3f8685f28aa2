"""The bias correction with t = count, 1 - b ** count: at the first step that is 1 - 1 = 0, a division by
zero, and later it is off by one step.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    mu = jax.tree.map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - b2) * g * g + b2 * v, grads, nu)
    c1, c2 = 1 - b1 ** count, 1 - b2 ** count
    params = jax.tree.map(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + weight_decay * p),
                          params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": count + 1}
