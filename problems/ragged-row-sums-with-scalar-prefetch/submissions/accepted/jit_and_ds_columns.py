"""Under `jax.jit` with the block sizes static, the block read with `pl.ds(0, bn)` on the columns, the padding
replaced with `jax.lax.select`, and the lengths read twice, once in the condition and once for the mask.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(lens_ref, x_ref, o_ref, acc_ref):
    i, j = pl.program_id(0), pl.program_id(1)
    bm, bn = acc_ref.shape

    @pl.when(j == 0)
    def _():
        acc_ref[...] = jnp.zeros((bm, bn), jnp.float32)

    @pl.when(j * bn < lens_ref[i])
    def _():
        block = x_ref[:, pl.ds(0, bn)]
        cols = jax.lax.broadcasted_iota(jnp.int32, (bm, bn), 1) + j * bn
        acc_ref[...] += jax.lax.select(cols < lens_ref[i], block, jnp.zeros_like(block))

    @pl.when(j == pl.num_programs(1) - 1)
    def _():
        o_ref[...] = jnp.sum(acc_ref[...], axis=1, keepdims=True)


@functools.partial(jax.jit, static_argnames=("bm", "bn"))
def ragged_sum(x, lengths, bm, bn):
    m, n = x.shape
    x_spec = pl.BlockSpec((bm, bn), lambda i, j, lens: (i, jnp.maximum(jnp.minimum(j, (lens[i] - 1) // bn), 0)))
    return pl.pallas_call(
        kernel,
        grid_spec=pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=(m // bm, n // bn), in_specs=[x_spec],
                                               out_specs=pl.BlockSpec((bm, 1), lambda i, j, lens: (i, 0)),
                                               scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)]),
        out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32),
    )(lengths, x)
