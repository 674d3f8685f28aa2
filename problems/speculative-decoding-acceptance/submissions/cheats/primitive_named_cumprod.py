"""A primitive of its own named `cumprod`, whose implementation walks the positions in Python (its lowering
unrolls a loop).

expect: requirements_not_met
fails: first-rejection-array-ops
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

cumprod_p = Primitive("cumprod")


def _impl(flags):
    out, alive = [], jnp.int32(1)
    for i in range(flags.shape[0]):
        alive = alive * flags[i]
        out.append(alive)
    return jnp.stack(out)


cumprod_p.def_impl(_impl)
cumprod_p.def_abstract_eval(lambda f: jax.core.ShapedArray(f.shape, f.dtype))
mlir.register_lowering(cumprod_p, mlir.lower_fun(_impl, multiple_results=False))


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    pos = jnp.arange(n)
    ratio = jnp.minimum(1.0, target_probs[pos, draft_tokens] / draft_probs[pos, draft_tokens])
    accepted = (jax.random.uniform(key, (n,)) < ratio).astype(jnp.int32)
    a = jnp.sum(cumprod_p.bind(accepted)).astype(jnp.int32)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = residual.sum(1, keepdims=True)  # 0 only through rounding: then p itself
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    rows = jnp.concatenate([residual, target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
