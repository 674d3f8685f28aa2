"""An accumulator for the whole output, (M, N) float32 in VMEM, each step adding into its own tile (read
and written with `pl.ds`): right in interpret mode, but at M = N = 2048 that scratch alone is 16 MiB, past a
v5e's 16 MiB of scoped VMEM, and Mosaic refuses it. One (bm, bn) tile is all a step needs.

expect: requirements_not_met
fails: compiles-for-tpu-v5e
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def blocked_matmul(a, b, bm, bn, bk):
    m, k = a.shape
    n = b.shape[1]

    def kernel(a_ref, b_ref, o_ref, acc_ref):
        i, j = pl.program_id(0), pl.program_id(1)
        rows, cols = pl.ds(i * bm, bm), pl.ds(j * bn, bn)

        @pl.when(pl.program_id(2) == 0)
        def _():
            acc_ref[rows, cols] = jnp.zeros((bm, bn), jnp.float32)

        acc_ref[rows, cols] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)
        o_ref[...] = acc_ref[rows, cols]

    return pl.pallas_call(
        kernel, grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        scratch_shapes=[pltpu.VMEM((m, n), jnp.float32)],
    )(a, b)
