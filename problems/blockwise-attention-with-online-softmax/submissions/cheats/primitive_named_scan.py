"""Cheat: a primitive of the submission's own, registered under JAX's name `scan`, whose implementation
computes the whole attention; the traced program holds only it.

expect: requirements_not_met
fails: one-scan-over-key-blocks, running-max-in-carry
"""
from jax.extend.core import Primitive
from jax.interpreters import mlir
import jax
import jax.numpy as jnp

def _scanned(q, k, v, block_size):
    """The reference's online softmax: one scan over the key blocks."""
    T, d = q.shape
    S, e = v.shape
    n = S // block_size

    def step(carry, kv):
        m, l, o = carry
        k_j, v_j = kv
        s = q @ k_j.T / jnp.sqrt(jnp.float32(d))
        m_new = jnp.maximum(m, s.max(axis=-1))
        p = jnp.exp(s - m_new[:, None])
        c = jnp.exp(m - m_new)
        return (m_new, c * l + p.sum(-1), c[:, None] * o + p @ v_j), None

    init = (jnp.full((T,), -jnp.inf), jnp.zeros((T,)), jnp.zeros((T, e)))
    (m, l, o), _ = jax.lax.scan(step, init, (k.reshape(n, block_size, d), v.reshape(n, block_size, e)))
    return o / l[:, None]


scan_p = Primitive("scan")
BLOCK = {}


def _impl(q, k, v):
    return _scanned(q, k, v, BLOCK["size"])


scan_p.def_impl(_impl)
scan_p.def_abstract_eval(lambda q, k, v: jax.core.ShapedArray((q.shape[0], v.shape[1]), q.dtype))
mlir.register_lowering(scan_p, mlir.lower_fun(_impl, multiple_results=False))


def blockwise_attention(q, k, v, block_size):
    BLOCK["size"] = block_size
    return scan_p.bind(q, k, v)
