"""`lengths` is prefetched, and nothing reads it: the index map is `(i, j)` and the kernel masks with a second
copy of the lengths, broadcast outside to one per row and passed as a VMEM block.

expect: requirements_not_met
fails: pallas-grid, scalar-prefetch, skips-past-length
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(lens_ref, x_ref, rowlen_ref, o_ref):
    j = pl.program_id(1)
    bm, bn = x_ref.shape

    @pl.when(j == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    cols = j * bn + jax.lax.broadcasted_iota(jnp.int32, (bm, bn), 1)
    o_ref[...] += jnp.sum(jnp.where(cols < rowlen_ref[...], x_ref[...], 0.0), axis=1, keepdims=True)


def ragged_sum(x, lengths, bm, bn):
    m, n = x.shape
    per_row = jnp.repeat(lengths, bm)[:, None]
    spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1, grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, bn), lambda i, j, lens: (i, j)), pl.BlockSpec((bm, 1), lambda i, j, lens: (i, 0))],
        out_specs=pl.BlockSpec((bm, 1), lambda i, j, lens: (i, 0)))
    return pl.pallas_call(kernel, grid_spec=spec, out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32))(lengths, x, per_row)
