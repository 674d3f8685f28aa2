"""One grid step and one block: the whole of `x`, and the lengths repeated outside to one per row and passed as a
second whole block, masked and summed in the kernel. Nothing is skipped: every padding entry is copied into
VMEM, and at the compile size the block does not fit.

expect: requirements_not_met
fails: pallas-grid, scalar-prefetch, skips-past-length, compiles-for-tpu-v5e
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, rowlen_ref, o_ref):
    cols = jax.lax.broadcasted_iota(jnp.int32, x_ref.shape, 1)
    o_ref[...] = jnp.sum(jnp.where(cols < rowlen_ref[...], x_ref[...], 0.0), axis=1, keepdims=True)


def ragged_sum(x, lengths, bm, bn):
    m, n = x.shape
    per_row = jnp.repeat(lengths, bm)[:, None]
    return pl.pallas_call(
        kernel, grid=(1, 1),
        in_specs=[pl.BlockSpec((m, n), lambda i, j: (0, 0)), pl.BlockSpec((m, 1), lambda i, j: (0, 0))],
        out_specs=pl.BlockSpec((m, 1), lambda i, j: (0, 0)),
        out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32),
    )(x, per_row)
