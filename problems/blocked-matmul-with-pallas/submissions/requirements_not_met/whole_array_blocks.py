"""One block the size of each whole array: a grid of one step. Right in interpret mode on a CPU, but at the
realistic size the blocks of one step (a and b, 8 MiB each in bfloat16, and the 16 MiB float32 output,
each double-buffered) are far past a v5e's 16 MiB of scoped VMEM, and Mosaic refuses it. Its `pl.when`
guards nothing (with one step there is no accumulator to zero), which the init row does not count.

expect: requirements_not_met
fails: pallas-grid, init-guarded, compiles-for-tpu-v5e
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(a_ref, b_ref, o_ref):
    o_ref[...] = jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == 0)
    def _():
        pass


def blocked_matmul(a, b, bm, bn, bk):
    m, k = a.shape
    n = b.shape[1]
    return pl.pallas_call(
        kernel, grid=(1, 1, 1),
        in_specs=[pl.BlockSpec((m, k), lambda i, j, kk: (0, 0)), pl.BlockSpec((k, n), lambda i, j, kk: (0, 0))],
        out_specs=pl.BlockSpec((m, n), lambda i, j, kk: (0, 0)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
    )(a, b)
