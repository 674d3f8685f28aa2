"""Each step stages its exponentials in a VMEM scratch buffer the size of the whole matrix, at the block's
rows (`pl.ds`), and normalises from there: right in interpret mode, but at M = 4096, N = 2048 that buffer
alone is 32 MiB, twice a v5e's 16 MiB of scoped VMEM, and Mosaic refuses it. The block is all a step needs.

expect: requirements_not_met
fails: compiles-for-tpu-v5e
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def row_softmax(x, bm):
    m, n = x.shape

    def kernel(x_ref, o_ref, stage_ref):
        rows = pl.ds(pl.multiple_of(pl.program_id(0) * bm, bm), bm)
        x = x_ref[...]
        stage_ref[rows, :] = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        e = stage_ref[rows, :]
        o_ref[...] = e / jnp.sum(e, axis=-1, keepdims=True)

    return pl.pallas_call(
        kernel,
        grid=(m // bm,),
        in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        scratch_shapes=[pltpu.VMEM((m, n), jnp.float32)],
    )(x)
