"""All of `k` and `v` in one block, one grid step per query block: a plain softmax over the whole row of
scores in the kernel, no running state at all. Right numbers; at Lk = 32768 a row block of scores alone is
16 MiB of VMEM.

expect: requirements_not_met
fails: pallas-grid, online-softmax-in-scratch
"""
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(q_ref, k_ref, v_ref, o_ref):
    s = jnp.dot(q_ref[...], k_ref[...].T, preferred_element_type=jnp.float32) / math.sqrt(q_ref.shape[-1])
    p = jnp.exp(s - s.max(axis=-1, keepdims=True))
    o_ref[...] = jnp.dot(p, v_ref[...], preferred_element_type=jnp.float32) / p.sum(axis=-1, keepdims=True)


def flash_attention(q, k, v, bq, bk):
    lq, d = q.shape
    lk = k.shape[0]
    return pl.pallas_call(
        kernel, grid=(lq // bq,),
        in_specs=[pl.BlockSpec((bq, d), lambda i: (i, 0)), pl.BlockSpec((lk, d), lambda i: (0, 0)),
                  pl.BlockSpec((lk, d), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((bq, d), lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct((lq, d), jnp.float32),
    )(q, k, v)
