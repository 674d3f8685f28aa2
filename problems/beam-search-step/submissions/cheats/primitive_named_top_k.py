"""A primitive of its own registered under the name `top_k`, whose implementation and lowering sort the
candidates: named like JAX's, but not JAX's.

expect: requirements_not_met
fails: one-top-k, flat-index-split
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

top_k_p = Primitive("top_k")
top_k_p.multiple_results = True


def _impl(x, *, k):
    order = jnp.argsort(-x, stable=True)[:k].astype(jnp.int32)
    return [x[order], order]


top_k_p.def_impl(_impl)
top_k_p.def_abstract_eval(lambda x, *, k: [jax.core.ShapedArray((k,), x.dtype),
                                           jax.core.ShapedArray((k,), jnp.int32)])
mlir.register_lowering(top_k_p, mlir.lower_fun(_impl, multiple_results=True))


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    flat = (scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)).reshape(-1)
    vals, idx = top_k_p.bind(flat, k=k)
    parents, tokens = idx // v, idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
