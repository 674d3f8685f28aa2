"""The Adam paper's "efficient" form, alpha_t = lr * sqrt(1 - b2^t) / (1 - b1^t) with eps left unscaled:
a different update from optax's whenever eps is not negligible.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    alpha = lr * jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    mu = jax.tree.map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - b2) * g * g + b2 * v, grads, nu)
    params = jax.tree.map(lambda p, m, v: p - alpha * m / (jnp.sqrt(v) + eps) - lr * weight_decay * p,
                          params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": t}
