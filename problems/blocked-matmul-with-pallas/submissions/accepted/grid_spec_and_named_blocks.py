"""`pl.GridSpec` with keyword block specs, `jax.lax.dot` in the kernel, and the accumulator kept in the
output block (no scratch), zeroed under `pl.when(pl.program_id(axis=2) == 0)`.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(a_ref, b_ref, o_ref):
    @pl.when(pl.program_id(axis=2) == 0)
    def _zero():
        o_ref[...] = jnp.zeros(o_ref.shape, o_ref.dtype)

    o_ref[...] += jax.lax.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)


def blocked_matmul(a, b, bm, bn, bk):
    (m, k), n = a.shape, b.shape[1]
    a_spec = pl.BlockSpec(block_shape=(bm, bk), index_map=lambda i, j, s: (i, s))
    b_spec = pl.BlockSpec(block_shape=(bk, bn), index_map=lambda i, j, s: (s, j))
    o_spec = pl.BlockSpec(block_shape=(bm, bn), index_map=lambda i, j, s: (i, j))
    spec = pl.GridSpec(grid=(m // bm, n // bn, k // bk), in_specs=[a_spec, b_spec], out_specs=o_spec)
    return pl.pallas_call(kernel, grid_spec=spec, out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(a, b)
