"""A primitive of its own named `div` that floor-divides: it looks like integer division in the printed
program, but it is not JAX's.

expect: requirements_not_met
fails: flat-index-split
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

div_p = Primitive("div")


def _impl(x, *, by):
    return jnp.floor_divide(x, by)


div_p.def_impl(_impl)
div_p.def_abstract_eval(lambda x, *, by: jax.core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(div_p, mlir.lower_fun(_impl, multiple_results=False))


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    flat = (scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)).reshape(-1)
    vals, idx = jax.lax.top_k(flat, k)
    parents = div_p.bind(idx, by=v)
    tokens = idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
