"""The guards spelled without `pl.when`: the reset by `jax.lax.cond` on the key/value index, the store under
`j + 1 == pl.num_programs(1)`; the scratch Refs read and written through `pl.ds` slices, named index maps,
`k_ref[...].T` for the transpose and the scale as a division by `jnp.sqrt(D)`.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def query_block(i, j):
    return i, 0


def key_block(i, j):
    return j, 0


def kernel(q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref, *, bq, d):
    j = pl.program_id(1)
    rows = pl.ds(0, bq)

    def reset():
        m_ref[rows, :] = jnp.full((bq, 1), -jnp.inf, jnp.float32)
        l_ref[rows, :] = jnp.zeros((bq, 1), jnp.float32)
        acc_ref[rows, :] = jnp.zeros((bq, d), jnp.float32)

    jax.lax.cond(j == 0, reset, lambda: None)
    s = jnp.dot(q_ref[rows, :], k_ref[...].T, preferred_element_type=jnp.float32) / jnp.sqrt(jnp.float32(d))
    m_prev = m_ref[rows, :]
    m_cur = jnp.maximum(m_prev, jnp.max(s, axis=-1, keepdims=True))
    correction = jnp.exp(m_prev - m_cur)
    p = jnp.exp(s - m_cur)
    m_ref[rows, :] = m_cur
    l_ref[rows, :] = l_ref[rows, :] * correction + jnp.sum(p, axis=-1, keepdims=True)
    acc_ref[rows, :] = acc_ref[rows, :] * correction + jnp.dot(p, v_ref[...], preferred_element_type=jnp.float32)

    @pl.when(j + 1 == pl.num_programs(1))
    def _():
        o_ref[rows, :] = acc_ref[rows, :] * (1.0 / l_ref[rows, :])


def flash_attention(q, k, v, bq, bk):
    lq, d = q.shape
    lk = k.shape[0]
    return pl.pallas_call(
        functools.partial(kernel, bq=bq, d=d), grid=(lq // bq, lk // bk),
        in_specs=[pl.BlockSpec((bq, d), query_block), pl.BlockSpec((bk, d), key_block),
                  pl.BlockSpec((bk, d), key_block)],
        out_specs=pl.BlockSpec((bq, d), query_block),
        out_shape=jax.ShapeDtypeStruct((lq, d), q.dtype),
        scratch_shapes=(pltpu.VMEM((bq, 1), jnp.float32), pltpu.VMEM((bq, 1), jnp.float32),
                        pltpu.VMEM((bq, d), jnp.float32)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
    )(q, k, v)
