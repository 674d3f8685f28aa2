"""The output is written at the last block that holds entries, so a row block of length 0 is never written, and
the empty rows are patched afterwards with `jnp.where` on the repeated lengths: one more pass over the result
in HBM, outside the kernel.

expect: requirements_not_met
fails: pallas-grid
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def ragged_kernel(lens_ref, x_ref, o_ref, acc_ref):
    i, j = pl.program_id(0), pl.program_id(1)
    bm, bn = x_ref.shape
    length = lens_ref[i]

    @pl.when(j == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    @pl.when(j * bn < length)
    def _accumulate():
        cols = j * bn + jax.lax.broadcasted_iota(jnp.int32, (bm, bn), 1)
        acc_ref[...] += jnp.where(cols < length, x_ref[...], 0.0)

    @pl.when(j == (length - 1) // bn)
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
    out = pl.pallas_call(
        ragged_kernel, grid_spec=grid_spec,
        out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
    )(lengths, x)
    return jnp.where(jnp.repeat(lengths, bm)[:, None] > 0, out, 0.0)
