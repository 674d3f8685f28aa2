"""The reference kernel with every grid axis marked `"parallel"`, the contraction axis too. A TPU may run a
parallel axis's steps in any order and split them between cores (a v4 or v5p has two per chip), so the
accumulator zeroed at `kk == 0` and stored at the last `kk` no longer brackets the sum. Generic interpret
mode runs the steps in order and gets the right numbers; the grader's TPU interpret mode visits parallel
axes in a shuffled order, and the numbers come out wrong, as on such a chip.

expect: wrong_answer
fails: none
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
    return pl.pallas_call(
        kernel, grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "parallel")),
    )(a, b)
