"""Base-2 exponentials with log2(e) folded into the softmax scale (`exp(x) = exp2(x * log2(e))`, one multiply
fewer per score), the grid in a `pl.GridSpec`, the scores by `jnp.einsum`, and the running maximum kept in
base-2 units.

expect: accepted
fails: none
"""
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

LOG2_E = 1.4426950408889634


def kernel(q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref):
    @pl.when(pl.program_id(1) == 0)
    def _():
        m_ref[...] = jnp.full(m_ref.shape, -jnp.inf, jnp.float32)
        l_ref[...] = jnp.zeros(l_ref.shape, jnp.float32)
        acc_ref[...] = jnp.zeros(acc_ref.shape, jnp.float32)

    scale2 = LOG2_E / math.sqrt(q_ref.shape[-1])
    s2 = jnp.einsum("qd,kd->qk", q_ref[...], k_ref[...], preferred_element_type=jnp.float32) * scale2
    m_old = m_ref[...]
    m_new = jnp.maximum(m_old, s2.max(axis=-1, keepdims=True))
    p = jnp.exp2(s2 - m_new)
    alpha = jnp.exp2(m_old - m_new)
    l_ref[...] = alpha * l_ref[...] + p.sum(axis=-1, keepdims=True)
    acc_ref[...] = alpha * acc_ref[...] + jnp.einsum("qk,kd->qd", p, v_ref[...], preferred_element_type=jnp.float32)
    m_ref[...] = m_new

    @pl.when(pl.program_id(1) == pl.num_programs(1) - 1)
    def _():
        o_ref[...] = acc_ref[...] / l_ref[...]


def flash_attention(q, k, v, bq, bk):
    (lq, d), lk = q.shape, k.shape[0]
    spec = pl.GridSpec(
        grid=(lq // bq, lk // bk),
        in_specs=[pl.BlockSpec((bq, d), lambda i, j: (i, 0)), pl.BlockSpec((bk, d), lambda i, j: (j, 0)),
                  pl.BlockSpec((bk, d), lambda i, j: (j, 0))],
        out_specs=pl.BlockSpec((bq, d), lambda i, j: (i, 0)),
        scratch_shapes=[pltpu.VMEM((bq, 1), jnp.float32), pltpu.VMEM((bq, 1), jnp.float32),
                        pltpu.VMEM((bq, d), jnp.float32)])
    return pl.pallas_call(kernel, grid_spec=spec, out_shape=jax.ShapeDtypeStruct((lq, d), jnp.float32))(q, k, v)
