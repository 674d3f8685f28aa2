"""The powers by squaring in a `lax.fori_loop` of fixed length (21 bits cover every count the constraints
allow): the loop's length does not depend on the step, so the cost is constant.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax import lax


def _power(base, t):
    def body(i, carry):
        result, square = carry
        bit = (t >> i) & 1
        result = jnp.where(bit == 1, result * square, result)
        return result, square * square
    result, _ = lax.fori_loop(0, 21, body, (jnp.float32(1.0), jnp.asarray(base, jnp.float32)))
    return result


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = jnp.asarray(count, jnp.int32) + 1
    c1, c2 = 1 - _power(b1, t), 1 - _power(b2, t)
    mu = jax.tree.map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - b2) * g * g + b2 * v, grads, nu)
    params = jax.tree.map(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + weight_decay * p),
                          params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": t}
