"""b2 used for the first moment and b1 for the second.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    mu = jax.tree.map(lambda g, m: (1 - b2) * g + b2 * m, grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - b1) * g * g + b1 * v, grads, nu)
    params = jax.tree.map(
        lambda p, m, v: p - lr * ((m / (1 - b2 ** t)) / (jnp.sqrt(v / (1 - b1 ** t)) + eps) + weight_decay * p),
        params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": t}
