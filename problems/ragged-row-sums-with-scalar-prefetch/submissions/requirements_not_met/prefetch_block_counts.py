"""The prefetched operand is each row block's number of blocks, `pl.cdiv(lengths, bn)`, computed before the
call, and the kernel masks with the lengths passed again as a VMEM block: right sums, but the operand the
index map reads is not `lengths` (the grader evaluates the index map and the skip on the lengths
themselves), and the lengths reach the kernel as a second blocked operand.

expect: requirements_not_met
fails: pallas-grid, scalar-prefetch, skips-past-length
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(nblocks_ref, x_ref, len_ref, o_ref, acc_ref):
    i, j = pl.program_id(0), pl.program_id(1)
    bm, bn = x_ref.shape

    @pl.when(j == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    @pl.when(j < nblocks_ref[i])
    def _():
        cols = j * bn + jax.lax.broadcasted_iota(jnp.int32, (bm, bn), 1)
        acc_ref[...] += jnp.where(cols < len_ref[...], x_ref[...], 0.0)

    @pl.when(j == pl.num_programs(1) - 1)
    def _():
        o_ref[...] = jnp.sum(acc_ref[...], axis=1, keepdims=True)


def ragged_sum(x, lengths, bm, bn):
    m, n = x.shape
    nblocks = pl.cdiv(lengths, bn)
    per_row = jnp.repeat(lengths, bm)[:, None]
    spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1, grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, bn), lambda i, j, nb: (i, jnp.minimum(j, jnp.maximum(nb[i] - 1, 0)))),
                  pl.BlockSpec((bm, 1), lambda i, j, nb: (i, 0))],
        out_specs=pl.BlockSpec((bm, 1), lambda i, j, nb: (i, 0)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)])
    return pl.pallas_call(kernel, grid_spec=spec, out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32))(nblocks, x, per_row)
