"""Written the way jax's own TPU kernels write offsets: `pl.multiple_of(j * bn, bn)` for the block's first
column, `jax.lax.min`/`lax.max`/`lax.div` in the index map, the lengths reshaped to (M // bm,) before the
call (a view), and the kernel bound with `functools.partial`.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def ragged_kernel(lens_ref, x_ref, o_ref, acc_ref, *, block_n):
    row_block, col_block = pl.program_id(0), pl.program_id(1)
    start = pl.multiple_of(col_block * block_n, block_n)
    length = lens_ref[row_block]

    @pl.when(col_block == 0)
    def _zero():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    @pl.when(start < length)
    def _add():
        col = start + lax.broadcasted_iota(jnp.int32, acc_ref.shape, 1)
        acc_ref[...] += jnp.where(col < length, x_ref[...].astype(jnp.float32), 0.0)

    @pl.when(col_block == pl.num_programs(1) - 1)
    def _out():
        o_ref[...] = jnp.sum(acc_ref[...], axis=1, keepdims=True).astype(o_ref.dtype)


def ragged_sum(x, lengths, bm, bn):
    m, n = x.shape
    lengths = lengths.reshape(m // bm).astype(jnp.int32)

    def x_map(i, j, lens):
        last = lax.div(lax.max(lens[i] - 1, 0), bn)
        return i, lax.min(j, last)

    return pl.pallas_call(
        functools.partial(ragged_kernel, block_n=bn),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(m // bm, n // bn),
            in_specs=[pl.BlockSpec((bm, bn), x_map)],
            out_specs=pl.BlockSpec((bm, 1), lambda i, j, lens: (i, 0)),
            scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)]),
        out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
    )(lengths, x)
