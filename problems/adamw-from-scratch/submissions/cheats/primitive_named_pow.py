"""A primitive of its own named `pow` computes the powers: a look-alike of JAX's, whose work the grader
cannot see.

expect: requirements_not_met
fails: no-host-callback
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

pow_p = Primitive("pow")
pow_p.def_impl(lambda b, t: jnp.power(b, t))
pow_p.def_abstract_eval(lambda b, t: jax.core.ShapedArray((), jnp.float32))
mlir.register_lowering(pow_p, mlir.lower_fun(lambda b, t: jnp.power(b, t).astype(jnp.float32),
                                             multiple_results=False))


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    c1 = 1 - pow_p.bind(jnp.float32(b1), jnp.int32(t))
    c2 = 1 - pow_p.bind(jnp.float32(b2), jnp.int32(t))
    mu = jax.tree.map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - b2) * g * g + b2 * v, grads, nu)
    params = jax.tree.map(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + weight_decay * p),
                          params, mu, nu)
    return {"params": params, "mu": mu, "nu": nu, "count": t}
