"""The right powers with `b1 ** t`, plus zero times powers from a loop of t steps: the loop still runs t
times at every step.

expect: requirements_not_met
fails: bias-correction-from-count
"""
import jax
import jax.numpy as jnp
from jax import lax


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    looped = lax.fori_loop(0, t, lambda i, c: c * b1, jnp.float32(1))
    c1, c2 = 1 - b1 ** t + 0.0 * looped, 1 - b2 ** t
    mu = jax.tree.map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - b2) * g * g + b2 * v, grads, nu)
    params = jax.tree.map(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + weight_decay * p),
                          params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": t}
