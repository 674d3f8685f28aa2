"""The decay added to the gradient (Adam + L2) and its share taken back out of each moment. In exact
arithmetic that is AdamW, but float32 leaves a residue of the size of one rounding, and on a leaf whose
gradient is zero the step divides that residue by eps = 1e-8: far off. `params` also flows into the moments.

expect: wrong_answer
fails: decoupled-weight-decay
"""
import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    g_l2 = jax.tree.map(lambda g, p: g + weight_decay * p, grads, params)
    mu = jax.tree.map(lambda gl, m, p: (1 - b1) * gl + b1 * m - (1 - b1) * weight_decay * p, g_l2, mu, params)
    nu = jax.tree.map(lambda gl, v, p: (1 - b2) * jnp.square(gl - weight_decay * p) + b2 * v, g_l2, nu, params)
    params = jax.tree.map(
        lambda p, m, v: p - lr * ((m / (1 - b1 ** t)) / (jnp.sqrt(v / (1 - b2 ** t)) + eps) + weight_decay * p),
        params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": t}
