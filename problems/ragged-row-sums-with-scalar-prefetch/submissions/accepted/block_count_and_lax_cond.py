"""The length counted in blocks, `pl.cdiv(length, bn)`: the index map keeps step `j` while `j` is below that
count and otherwise names the last counted block (`jnp.where`, floored at 0), and the kernel adds under
`jax.lax.cond(j < nblocks, ...)` rather than `pl.when`. The same blocks are copied and added.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _x_index(i, j, lens, *, bn):
    nblocks = pl.cdiv(lens[i], bn)
    return i, jnp.where(j < nblocks, j, jnp.maximum(nblocks - 1, 0))


def _kernel(lens_ref, x_ref, o_ref, acc_ref, *, bn):
    j = pl.program_id(1)
    length = lens_ref[pl.program_id(0)]
    nblocks = pl.cdiv(length, bn)

    @pl.when(j == 0)
    def _():
        acc_ref[...] = jnp.zeros(acc_ref.shape, jnp.float32)

    def add():
        cols = jax.lax.broadcasted_iota(jnp.int32, acc_ref.shape, 1) + j * bn
        acc_ref[...] = acc_ref[...] + jnp.where(cols < length, x_ref[...], jnp.zeros_like(x_ref))

    jax.lax.cond(j < nblocks, add, lambda: None)

    @pl.when(j == pl.num_programs(1) - 1)
    def _():
        o_ref[...] = acc_ref[...].sum(axis=-1, keepdims=True)


def ragged_sum(x, lengths, bm, bn):
    m, n = x.shape
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1, grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, bn), functools.partial(_x_index, bn=bn))],
        out_specs=pl.BlockSpec((bm, 1), lambda i, j, lens: (i, 0)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)])
    return pl.pallas_call(functools.partial(_kernel, bn=bn), grid_spec=grid_spec,
                          out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32))(lengths, x)
