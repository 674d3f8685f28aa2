"""A primitive of its own named `lt` that performs the acceptance test: printed like JAX's comparison, but not
JAX's.

expect: requirements_not_met
fails: uniforms-from-key, first-rejection-array-ops
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

lt_p = Primitive("lt")


def _impl(a, b):
    return jnp.less(a, b)


lt_p.def_impl(_impl)
lt_p.def_abstract_eval(lambda a, b: jax.core.ShapedArray(a.shape, jnp.bool_))
mlir.register_lowering(lt_p, mlir.lower_fun(_impl, multiple_results=False))


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    pos = jnp.arange(n)
    ratio = jnp.minimum(1.0, target_probs[pos, draft_tokens] / draft_probs[pos, draft_tokens])
    accepted = lt_p.bind(jax.random.uniform(key, (n,)), ratio)
    a = jnp.sum(jnp.cumprod(accepted.astype(jnp.int32))).astype(jnp.int32)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = residual.sum(1, keepdims=True)  # 0 only through rounding: then p itself
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    rows = jnp.concatenate([residual, target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
