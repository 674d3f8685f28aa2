"""The moments used as they are, without dividing by 1 - b ** t: early steps are far too long.

expect: wrong_answer
fails: bias-correction-from-count
"""
import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    mu = jax.tree.map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - b2) * g * g + b2 * v, grads, nu)
    params = jax.tree.map(lambda p, m, v: p - lr * (m / (jnp.sqrt(v) + eps) + weight_decay * p), params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": count + 1}
