"""The powers by repeated multiplication in `lax.fori_loop(0, t, ...)`: right numbers, but the loop runs
t times, a million at step 1,000,000.

expect: requirements_not_met
fails: bias-correction-from-count
"""
import jax
import jax.numpy as jnp
from jax import lax


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    p1, p2 = lax.fori_loop(0, t, lambda i, c: (c[0] * b1, c[1] * b2), (jnp.float32(1), jnp.float32(1)))
    c1, c2 = 1 - p1, 1 - p2
    mu = jax.tree.map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - b2) * g * g + b2 * v, grads, nu)
    params = jax.tree.map(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + weight_decay * p),
                          params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": t}
