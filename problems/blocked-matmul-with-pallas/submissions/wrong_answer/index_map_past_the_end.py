"""An off-by-one in `a`'s index map: at the last contraction step it names block `kk + 5`, past the end of
`a`. Generic interpret mode clamps the block back onto the last one, so the numbers come out right; on a TPU
v5e the same kernel's result was NaN. The grader runs kernels in TPU interpret mode, which stops at that
block and names the operand, the block and the grid step.

expect: runtime_error
fails: pallas-grid, work-in-kernel, init-guarded, compiles-for-tpu-v5e
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(a_ref, b_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
        o_ref[...] = acc_ref[...]


def blocked_matmul(a, b, bm, bn, bk):
    (m, k), n = a.shape, b.shape[1]
    last = k // bk - 1
    return pl.pallas_call(
        kernel, grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, jnp.where(kk == last, kk + 5, kk))),
                  pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
    )(a, b)
