"""Cheat: a primitive of the submission's own, registered under JAX's name `select_n`, whose implementation
drops the padding by slicing each row to its length; it stands where the mask should be applied.

expect: requirements_not_met
fails: mask-over-batch
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

LENGTHS = {}
select_p = Primitive("select_n")


def _impl(padded):
    lengths = LENGTHS["now"]
    return sum(jnp.sum(padded[i, :n]) for i, n in enumerate(lengths)) / sum(lengths)


select_p.def_impl(_impl)
select_p.def_abstract_eval(lambda padded: jax.core.ShapedArray((), padded.dtype))
mlir.register_lowering(select_p, mlir.lower_fun(_impl, multiple_results=False))


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    LENGTHS["now"] = lengths
    T = min(b for b in buckets if b >= max(lengths))
    padded = jnp.stack([jnp.pad(s, (0, T - s.shape[0]), constant_values=pad_value) for s in seqs])
    mask = (jnp.arange(T)[None, :] < jnp.array(lengths)[:, None]).astype(jnp.float32)
    return {"padded": padded, "mask": mask, "mean": select_p.bind(padded)}
