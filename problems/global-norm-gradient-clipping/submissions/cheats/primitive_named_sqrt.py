"""A primitive of its own named `sqrt` computes the norm: a look-alike of JAX's square root.

expect: requirements_not_met
fails: one-global-norm, no-host-callback
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

sqrt_p = Primitive("sqrt")
sqrt_p.def_impl(lambda x: jnp.exp(0.5 * jnp.log(x)))
sqrt_p.def_abstract_eval(lambda x: jax.core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(sqrt_p, mlir.lower_fun(lambda x: jnp.exp(0.5 * jnp.log(x)), multiple_results=False))


def clip_by_global_norm(grads, max_norm):
    sq = sum(jnp.sum(g * g) for g in jax.tree.leaves(grads))
    norm = jnp.where(sq > 0, sqrt_p.bind(jnp.where(sq > 0, sq, 1.0)), 0.0)
    clipped = jax.tree.map(lambda g: jnp.where(norm < max_norm, g, g / norm * max_norm), grads)
    return {"grads": clipped, "global_norm": norm}
