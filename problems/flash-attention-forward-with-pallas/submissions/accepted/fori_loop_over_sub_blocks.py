"""Each key/value block walked in two halves by a `fori_loop` inside the kernel, read with `pl.ds` slices of
the Refs; the running state is the loop's carry within a step and the scratch buffers between steps.

expect: accepted
fails: none
"""
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_kernel(bk, d):
    half = bk // 2 if bk % 2 == 0 else bk
    scale = 1.0 / math.sqrt(d)

    def kernel(q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref):
        @pl.when(pl.program_id(1) == 0)
        def _():
            m_ref[...] = jnp.full_like(m_ref, -jnp.inf)
            l_ref[...] = jnp.zeros_like(l_ref)
            acc_ref[...] = jnp.zeros_like(acc_ref)

        q = q_ref[...] * scale

        def body(c, state):
            m, l, acc = state
            kc = k_ref[pl.ds(c * half, half), :]
            vc = v_ref[pl.ds(c * half, half), :]
            s = jax.lax.dot_general(q, kc, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32)
            m_new = jnp.maximum(m, jnp.max(s, axis=1, keepdims=True))
            p = jnp.exp(s - m_new)
            alpha = jnp.exp(m - m_new)
            return m_new, alpha * l + p.sum(axis=1, keepdims=True), alpha * acc + p @ vc

        m, l, acc = jax.lax.fori_loop(0, bk // half, body, (m_ref[...], l_ref[...], acc_ref[...]))
        m_ref[...], l_ref[...], acc_ref[...] = m, l, acc

        @pl.when(pl.program_id(1) == pl.num_programs(1) - 1)
        def _():
            o_ref[...] = acc_ref[...] / l_ref[...]

    return kernel


def flash_attention(q, k, v, bq, bk):
    lq, d = q.shape
    lk = k.shape[0]
    return pl.pallas_call(
        make_kernel(bk, d), grid=(lq // bq, lk // bk),
        in_specs=[pl.BlockSpec((bq, d), lambda i, j: (i, 0)), pl.BlockSpec((bk, d), lambda i, j: (j, 0)),
                  pl.BlockSpec((bk, d), lambda i, j: (j, 0))],
        out_specs=pl.BlockSpec((bq, d), lambda i, j: (i, 0)),
        out_shape=jax.ShapeDtypeStruct((lq, d), jnp.float32),
        scratch_shapes=[pltpu.VMEM((bq, 1), jnp.float32)] * 2 + [pltpu.VMEM((bq, d), jnp.float32)],
    )(q, k, v)
