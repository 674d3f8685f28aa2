"""Two passes instead of an online softmax: each step stages its block of scores in a (bq, Lk) scratch row
buffer, and the last step takes a plain softmax of the whole row and multiplies it by the values staged the
same way. Right numbers and a running-free kernel, but a whole row of scores for every query (Lk of them)
lives in VMEM: at Lk = 32768 that is what does not fit.

expect: requirements_not_met
fails: online-softmax-in-scratch
"""
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_kernel(bk):
    def kernel(q_ref, k_ref, v_ref, o_ref, s_ref, v_all_ref, m_ref):
        j = pl.program_id(1)
        s = jax.lax.dot_general(q_ref[...], k_ref[...], (((1,), (1,)), ((), ())),
                                preferred_element_type=jnp.float32) / math.sqrt(q_ref.shape[-1])
        s_ref[:, pl.ds(j * bk, bk)] = s
        v_all_ref[pl.ds(j * bk, bk), :] = v_ref[...]

        @pl.when(j == 0)
        def _():
            m_ref[...] = jnp.full_like(m_ref, -jnp.inf)

        m_ref[...] = jnp.maximum(m_ref[...], s.max(axis=-1, keepdims=True))

        @pl.when(j == pl.num_programs(1) - 1)
        def _():
            p = jnp.exp(s_ref[...] - m_ref[...])
            o_ref[...] = jnp.dot(p, v_all_ref[...], preferred_element_type=jnp.float32) / p.sum(-1, keepdims=True)

    return kernel


def flash_attention(q, k, v, bq, bk):
    lq, d = q.shape
    lk = k.shape[0]
    return pl.pallas_call(
        make_kernel(bk), grid=(lq // bq, lk // bk),
        in_specs=[pl.BlockSpec((bq, d), lambda i, j: (i, 0)), pl.BlockSpec((bk, d), lambda i, j: (j, 0)),
                  pl.BlockSpec((bk, d), lambda i, j: (j, 0))],
        out_specs=pl.BlockSpec((bq, d), lambda i, j: (i, 0)),
        out_shape=jax.ShapeDtypeStruct((lq, d), jnp.float32),
        scratch_shapes=[pltpu.VMEM((bq, lk), jnp.float32), pltpu.VMEM((lk, d), jnp.float32),
                        pltpu.VMEM((bq, 1), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
    )(q, k, v)
