"""`pl.GridSpec` has no scalar prefetch: the lengths are passed as a plain operand in SMEM
(`pl.BlockSpec(memory_space=pltpu.SMEM)`), which the kernel can read but the index maps cannot, so every block
is copied, and the kernel masks what it does not need.

expect: requirements_not_met
fails: pallas-grid, scalar-prefetch, skips-past-length
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(lens_ref, x_ref, o_ref, acc_ref):
    i, j = pl.program_id(0), pl.program_id(1)
    bm, bn = x_ref.shape
    length = lens_ref[i]

    @pl.when(j == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    @pl.when(j * bn < length)
    def _():
        cols = j * bn + jax.lax.broadcasted_iota(jnp.int32, (bm, bn), 1)
        acc_ref[...] += jnp.where(cols < length, x_ref[...], 0.0)

    @pl.when(j == pl.num_programs(1) - 1)
    def _():
        o_ref[...] = jnp.sum(acc_ref[...], axis=1, keepdims=True)


def ragged_sum(x, lengths, bm, bn):
    m, n = x.shape
    spec = pl.GridSpec(grid=(m // bm, n // bn),
                       in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec((bm, bn), lambda i, j: (i, j))],
                       out_specs=pl.BlockSpec((bm, 1), lambda i, j: (i, 0)),
                       scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)])
    return pl.pallas_call(kernel, grid_spec=spec, out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32))(lengths, x)
