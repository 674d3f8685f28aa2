"""A step table selected away by `jnp.where(False, ...)` next to the direct powers: the table is still
built in the program.

expect: requirements_not_met
fails: bias-correction-from-count
"""
import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    table = 1 - b1 ** jnp.arange(1, 4097, dtype=jnp.int32)
    never = count < 0
    c1 = jnp.where(never, table[jnp.clip(count, 0, 4095)], 1 - b1 ** t)
    c2 = 1 - b2 ** t
    mu = jax.tree.map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - b2) * g * g + b2 * v, grads, nu)
    params = jax.tree.map(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + weight_decay * p),
                          params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": t}
