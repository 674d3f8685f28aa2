"""A primitive of its own named `select_n` that masks the finished rows: printed like JAX's select, but not
JAX's.

expect: requirements_not_met
fails: finished-by-select
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

select_p = Primitive("select_n")


def _impl(pred, on_false, on_true):
    return jnp.where(pred, on_true, on_false)


select_p.def_impl(_impl)
select_p.def_abstract_eval(lambda pred, a, b: jax.core.ShapedArray(a.shape, a.dtype))
mlir.register_lowering(select_p, mlir.lower_fun(_impl, multiple_results=False))


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.broadcast_to(jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf), (k, v))
    mask = jnp.broadcast_to(finished[:, None], (k, v))
    cand = scores[:, None] + select_p.bind(mask, log_probs, only_eos)
    vals, idx = jax.lax.top_k(cand.reshape(-1), k)
    parents, tokens = idx // v, idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
