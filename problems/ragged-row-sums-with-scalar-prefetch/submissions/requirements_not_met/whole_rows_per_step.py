"""One step per block of whole rows, `(bm, N)`, the lengths in SMEM as a plain operand and the padding masked
in the kernel: right sums, and every padding entry copied from HBM and added as a zero.

expect: requirements_not_met
fails: pallas-grid, scalar-prefetch, skips-past-length
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(lens_ref, x_ref, o_ref):
    length = lens_ref[pl.program_id(0)]
    cols = jax.lax.broadcasted_iota(jnp.int32, x_ref.shape, 1)
    o_ref[...] = jnp.sum(jnp.where(cols < length, x_ref[...], 0.0), axis=1, keepdims=True)


def ragged_sum(x, lengths, bm, bn):
    m, n = x.shape
    return pl.pallas_call(
        kernel, grid=(m // bm,),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec((bm, n), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((bm, 1), lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32),
    )(lengths, x)
