import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    mu = jax.tree.map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - b2) * (g * g) + b2 * v, grads, nu)
    t = count + 1
    correction1 = 1 - b1 ** t
    correction2 = 1 - b2 ** t
    direction = jax.tree.map(lambda m, v: (m / correction1) / (jnp.sqrt(v / correction2) + eps), mu, nu)
    new_params = jax.tree.map(lambda p, d: p - lr * (d + weight_decay * p), params, direction)
    return {"params": new_params, "mu": mu, "nu": nu, "count": t}
