"""The Adam direction is scaled by a factor that underflows to zero, so only the weight decay moves the
parameters. Every structural row still holds (leaf by leaf, decoupled decay, corrections from the traced
count, no callback): the corrections do reach the new parameters in the program, through a product that is
zero on these numbers. Only the numbers are wrong.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    mu = jax.tree.map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - b2) * (g * g) + b2 * v, grads, nu)
    t = count + 1
    c1, c2 = 1 - b1 ** t, 1 - b2 ** t
    tiny = 1e-30 * 1e-20
    direction = jax.tree.map(lambda m, v: (m / c1) / (jnp.sqrt(v / c2) + eps) * tiny, mu, nu)
    new_params = jax.tree.map(lambda p, d: p - lr * (d + weight_decay * p), params, direction)
    return {"params": new_params, "mu": mu, "nu": nu, "count": t}
