"""Reads through `pl.ds` slices inside a `lax.fori_loop` over the block's rows in two halves when they
split evenly (one pass otherwise), index maps that name every grid axis, and `lax.dot_general` spelled out.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def blocked_matmul(a, b, bm, bn, bk):
    (m, k), n = a.shape, b.shape[1]
    parts = 2 if bm % 16 == 0 else 1
    rows = bm // parts

    def kernel(a_ref, b_ref, o_ref, acc_ref):
        @pl.when(pl.program_id(2) == 0)
        def _():
            acc_ref[...] = jnp.zeros((bm, bn), jnp.float32)

        def body(p, carry):
            r = pl.ds(pl.multiple_of(p * rows, rows), rows)
            acc_ref[r, :] += jax.lax.dot_general(a_ref[r, pl.ds(0, bk)], b_ref[pl.ds(0, bk), :],
                                                 (((1,), (0,)), ((), ())), preferred_element_type=jnp.float32)
            return carry

        jax.lax.fori_loop(0, parts, body, 0)

        @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
        def _():
            o_ref[...] = acc_ref[...]

    return pl.pallas_call(
        kernel, grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i + 0 * j, kk)),
                  pl.BlockSpec((bk, bn), lambda i, j, kk: (kk + 0 * i, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j + 0 * kk)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=(pltpu.PARALLEL, pltpu.PARALLEL, pltpu.ARBITRARY)),
    )(a, b)
