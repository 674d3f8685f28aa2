"""The kernel the cases grade loads the prefetched lengths as a vector (`lens_ref[...]`), which Mosaic
refuses ("Can only load scalars from SMEM"); at the realistic size, which only the TPU compile uses, the
function builds the kernel with a scalar read instead, which compiles. The compile row compiles the graded
kernel only: the two traces are compared, and a different kernel fails the row.

expect: requirements_not_met
fails: compiles-for-tpu-v5e
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def ragged_kernel(lens_ref, x_ref, o_ref, acc_ref, vector):
    i, j = pl.program_id(0), pl.program_id(1)
    bm, bn = x_ref.shape
    length = lens_ref[...][i] if vector else lens_ref[i]

    @pl.when(j == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    @pl.when(j * bn < length)
    def _accumulate():
        cols = j * bn + jax.lax.broadcasted_iota(jnp.int32, (bm, bn), 1)
        acc_ref[...] += jnp.where(cols < length, x_ref[...], 0.0)

    @pl.when(j == pl.num_programs(1) - 1)
    def _store():
        o_ref[...] = jnp.sum(acc_ref[...], axis=1, keepdims=True)


def ragged_sum(x, lengths, bm, bn):
    m, n = x.shape
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1,
        grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, bn), lambda i, j, lens: (i, jnp.minimum(j, jnp.maximum(lens[i] - 1, 0) // bn)))],
        out_specs=pl.BlockSpec((bm, 1), lambda i, j, lens: (i, 0)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
    )
    big = m >= 1024  # the realistic size: the TPU compile's
    return pl.pallas_call(
        functools.partial(ragged_kernel, vector=not big), grid_spec=grid_spec,
        out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
    )(lengths, x)
