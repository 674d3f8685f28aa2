"""The compiler parameters copied from the blocked matmul: three dimension semantics for a grid of two
axes. Generic interpret mode ignores them and the numbers are right; a TPU cannot lower the call, and nor
can the grader's TPU interpret mode, which says so in a sentence.

expect: runtime_error
fails: pallas-grid, online-softmax-in-scratch, compiles-for-tpu-v5e
"""
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def flash_kernel(q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref):
    kv = pl.program_id(1)

    @pl.when(kv == 0)
    def _init():
        m_ref[...] = jnp.full_like(m_ref, -jnp.inf)
        l_ref[...] = jnp.zeros_like(l_ref)
        acc_ref[...] = jnp.zeros_like(acc_ref)

    q = q_ref[...]
    scale = 1.0 / math.sqrt(q.shape[-1])
    # this block's scores, (bq, bk): q times k transposed, without materialising the transpose
    s = jax.lax.dot_general(q, k_ref[...], (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32) * scale
    m_prev = m_ref[...]
    m_new = jnp.maximum(m_prev, jnp.max(s, axis=-1, keepdims=True))
    p = jnp.exp(s - m_new)
    alpha = jnp.exp(m_prev - m_new)          # moves what was summed under the old maximum onto the new one
    l_ref[...] = alpha * l_ref[...] + jnp.sum(p, axis=-1, keepdims=True)
    acc_ref[...] = alpha * acc_ref[...] + jnp.dot(p, v_ref[...], preferred_element_type=jnp.float32)
    m_ref[...] = m_new

    @pl.when(kv == pl.num_programs(1) - 1)
    def _store():
        o_ref[...] = acc_ref[...] / l_ref[...]


def flash_attention(q, k, v, bq, bk):
    lq, d = q.shape
    lk = k.shape[0]
    return pl.pallas_call(
        flash_kernel,
        grid=(lq // bq, lk // bk),
        in_specs=[pl.BlockSpec((bq, d), lambda i, j: (i, 0)),
                  pl.BlockSpec((bk, d), lambda i, j: (j, 0)),
                  pl.BlockSpec((bk, d), lambda i, j: (j, 0))],
        out_specs=pl.BlockSpec((bq, d), lambda i, j: (i, 0)),
        out_shape=jax.ShapeDtypeStruct((lq, d), jnp.float32),
        scratch_shapes=[pltpu.VMEM((bq, 1), jnp.float32), pltpu.VMEM((bq, 1), jnp.float32),
                        pltpu.VMEM((bq, d), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(q, k, v)
