"""As `jax.experimental.pallas.ops.tpu.flash_attention` spells it: the grid, blocks and scratch in one
`PrefetchScalarGridSpec` with no scalar operands, the running maximum and sum kept lane-broadcast as
(bq, 128) scratch (one row per query, the same value in all 128 lanes), the scores by an NT `dot_general`
and the output scaled by `pl.reciprocal` of the sum.

expect: accepted
fails: none
"""
import functools
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

MIN_BLOCK_SIZE = 128
NT_DIM_NUMBERS = (((1,), (1,)), ((), ()))


def _flash_attention_kernel(q_ref, k_ref, v_ref, o_ref, m_scratch_ref, l_scratch_ref, acc_scratch_ref, *,
                            sm_scale):
    kv_seq_idx = pl.program_id(1)

    @pl.when(kv_seq_idx == 0)
    def start_new_sequence():
        m_scratch_ref[...] = jnp.full(m_scratch_ref.shape, -jnp.inf, jnp.float32)
        l_scratch_ref[...] = jnp.zeros(l_scratch_ref.shape, jnp.float32)
        acc_scratch_ref[...] = jnp.zeros(acc_scratch_ref.shape, jnp.float32)

    m_prev, l_prev = m_scratch_ref[...], l_scratch_ref[...]          # (bq, 128), lane-broadcast
    q = q_ref[...]
    k = k_ref[...]
    s = jax.lax.dot_general(q, k, NT_DIM_NUMBERS, preferred_element_type=jnp.float32) * sm_scale
    m_curr = jnp.max(s, axis=1)[:, None]
    m_next = jnp.maximum(m_prev, m_curr)                              # (bq, 128)
    s_curr = jnp.exp(s - m_next[:, :1])
    l_curr = jnp.sum(s_curr, axis=1)[:, None]
    alpha = jnp.exp(m_prev - m_next)
    l_next = l_curr + alpha * l_prev
    m_scratch_ref[...], l_scratch_ref[...] = m_next, l_next
    o_curr = jax.lax.dot(s_curr, v_ref[...], preferred_element_type=jnp.float32)
    acc_scratch_ref[...] = acc_scratch_ref[...] * alpha[:, :1] + o_curr

    @pl.when(kv_seq_idx == (pl.num_programs(1) - 1))
    def store_output():
        o_ref[...] = (acc_scratch_ref[...] * pl.reciprocal(l_scratch_ref[...][:, :1], approx=False)).astype(o_ref.dtype)


def flash_attention(q, k, v, bq, bk):
    seq_len, head_dim = q.shape
    kv_seq_len = k.shape[0]
    kernel = functools.partial(_flash_attention_kernel, sm_scale=1.0 / math.sqrt(head_dim))
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=0,
        grid=(seq_len // bq, kv_seq_len // bk),
        in_specs=[pl.BlockSpec((bq, head_dim), lambda q_idx, kv_idx: (q_idx, 0)),
                  pl.BlockSpec((bk, head_dim), lambda q_idx, kv_idx: (kv_idx, 0)),
                  pl.BlockSpec((bk, head_dim), lambda q_idx, kv_idx: (kv_idx, 0))],
        out_specs=pl.BlockSpec((bq, head_dim), lambda q_idx, kv_idx: (q_idx, 0)),
        scratch_shapes=[pltpu.VMEM((bq, MIN_BLOCK_SIZE), jnp.float32),
                        pltpu.VMEM((bq, MIN_BLOCK_SIZE), jnp.float32),
                        pltpu.VMEM((bq, head_dim), jnp.float32)],
    )
    return pl.pallas_call(
        kernel, grid_spec=grid_spec, out_shape=jax.ShapeDtypeStruct(q.shape, jnp.float32),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
    )(q, k, v)
