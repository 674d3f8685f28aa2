"""The bias-corrected moments returned as the new state: the next step would correct them twice.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    mu_hat = jax.tree.map(lambda g, m: ((1 - b1) * g + b1 * m) / (1 - b1 ** t), grads, mu)
    nu_hat = jax.tree.map(lambda g, v: ((1 - b2) * g * g + b2 * v) / (1 - b2 ** t), grads, nu)
    params = jax.tree.map(lambda p, m, v: p - lr * (m / (jnp.sqrt(v) + eps) + weight_decay * p),
                          params, mu_hat, nu_hat)
    return {"params": params, "mu": mu_hat, "nu": nu_hat, "count": t}
