"""No scratch: the (bm, 1) output block stays in VMEM across the column steps (its index map ignores `j`, written
`j * 0` so it uses every grid axis), so the kernel adds each step's masked row sums into it directly; the
length read with `lens_ref[pl.program_id(0)]`, the mask a multiplication.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(lens_ref, x_ref, o_ref):
    j = pl.program_id(1)
    bn = x_ref.shape[1]
    length = lens_ref[pl.program_id(0)]

    @pl.when(j == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    @pl.when(j * bn < length)
    def _():
        cols = jax.lax.broadcasted_iota(jnp.int32, x_ref.shape, 1) + j * bn
        o_ref[...] += jnp.sum(x_ref[...] * (cols < length).astype(jnp.float32), axis=1, keepdims=True)


def ragged_sum(x, lengths, bm, bn):
    m, n = x.shape
    spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1,
        grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, bn), lambda i, j, lens: (i, jnp.minimum(j, jnp.maximum(lens[i] - 1, 0) // bn)))],
        out_specs=pl.BlockSpec((bm, 1), lambda i, j, lens: (i, j * 0)),
    )
    return pl.pallas_call(kernel, grid_spec=spec, out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32),
                          compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")))(lengths, x)
