"""The kernel takes `a`'s rows with `a_ref[pl.ds(start, bm), :]`, and at the last contraction step the start is
`bm`: rows `bm` to `2 bm - 1` of a block of `bm` rows, past its end. Generic interpret mode clamps the slice and
the numbers come out right; on a TPU v5e the error was 100. The grader's TPU interpret mode stops at the
read and says which buffer and which rows.

expect: runtime_error
fails: pallas-grid, work-in-kernel, init-guarded, compiles-for-tpu-v5e
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(a_ref, b_ref, o_ref, acc_ref):
    kk, last = pl.program_id(2), pl.num_programs(2) - 1
    bm = acc_ref.shape[0]

    @pl.when(kk == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    start = jnp.where(kk == last, bm, 0)
    acc_ref[...] += jnp.dot(a_ref[pl.ds(start, bm), :], b_ref[...], preferred_element_type=jnp.float32)

    @pl.when(kk == last)
    def _():
        o_ref[...] = acc_ref[...]


def blocked_matmul(a, b, bm, bn, bk):
    (m, k), n = a.shape, b.shape[1]
    return pl.pallas_call(
        kernel, grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
    )(a, b)
