"""The softmax done by `jnp` outside the kernel (the full score matrix and its weights in HBM), the kernel
reduced to a blocked product of the weights with `v`, accumulated in a scratch buffer over the key blocks.

expect: requirements_not_met
fails: pallas-grid, online-softmax-in-scratch
"""
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(p_ref, v_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(1) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(p_ref[...], v_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(1) == pl.num_programs(1) - 1)
    def _():
        o_ref[...] = acc_ref[...]


def flash_attention(q, k, v, bq, bk):
    lq, d = q.shape
    lk = k.shape[0]
    p = jax.nn.softmax(q @ k.T / math.sqrt(d), axis=-1)
    return pl.pallas_call(
        kernel, grid=(lq // bq, lk // bk),
        in_specs=[pl.BlockSpec((bq, bk), lambda i, j: (i, j)), pl.BlockSpec((bk, d), lambda i, j: (j, 0))],
        out_specs=pl.BlockSpec((bq, d), lambda i, j: (i, 0)),
        out_shape=jax.ShapeDtypeStruct((lq, d), jnp.float32),
        scratch_shapes=[pltpu.VMEM((bq, d), jnp.float32)],
    )(p, v)
