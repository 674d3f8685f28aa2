"""The Adam paper's "efficient" ordering: the corrections folded into the step size,
alpha_t = lr * sqrt(1 - b2^t) / (1 - b1^t), with eps rescaled to eps * sqrt(1 - b2^t) so that it is the
same update as optax's.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    root_c2 = jnp.sqrt(1 - b2 ** t)
    alpha = lr * root_c2 / (1 - b1 ** t)
    eps_hat = eps * root_c2
    mu = jax.tree.map(lambda g, m: b1 * m + (1 - b1) * g, grads, mu)
    nu = jax.tree.map(lambda g, v: b2 * v + (1 - b2) * g ** 2, grads, nu)
    params = jax.tree.map(lambda p, m, v: p - alpha * m / (jnp.sqrt(v) + eps_hat) - lr * weight_decay * p,
                          params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": t}
