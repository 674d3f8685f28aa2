"""Cheat: the running maximum is taken by a primitive of the submission's own registered under JAX's name
`max`; the numbers are right, but it is not JAX's `max`.

expect: requirements_not_met
fails: running-max-in-carry
"""
from jax.extend.core import Primitive
from jax.interpreters import mlir
import jax
import jax.numpy as jnp


max_p = Primitive("max")
max_p.def_impl(lambda a, b: jnp.maximum(a, b))
max_p.def_abstract_eval(lambda a, b: jax.core.ShapedArray(a.shape, a.dtype))
mlir.register_lowering(max_p, mlir.lower_fun(lambda a, b: jnp.maximum(a, b), multiple_results=False))


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size

    def step(carry, kv):
        m, l, o = carry
        k_j, v_j = kv
        s = q @ k_j.T / jnp.sqrt(jnp.float32(d))
        m_new = max_p.bind(m, s.max(axis=-1))
        p = jnp.exp(s - m_new[:, None])
        c = jnp.exp(m - m_new)
        return (m_new, c * l + p.sum(-1), c[:, None] * o + p @ v_j), None

    init = (jnp.full((T,), -jnp.inf), jnp.zeros((T,)), jnp.zeros((T, e)))
    (m, l, o), _ = jax.lax.scan(step, init, (k.reshape(n, block_size, d), v.reshape(n, block_size, e)))
    return o / l[:, None]
