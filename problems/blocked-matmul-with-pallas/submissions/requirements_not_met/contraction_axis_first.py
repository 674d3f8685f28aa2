"""The grid puts the contraction axis first, `(K // bk, M // bm, N // bn)`: the same numbers, but a grid's
last axis is the one that runs innermost, so each output tile is now revisited across the whole grid
instead of finished in one stretch of steps (and the first axis is the one a v5e's compiler would split).

expect: requirements_not_met
fails: pallas-grid, init-guarded
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(a_ref, b_ref, o_ref):
    @pl.when(pl.program_id(0) == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    o_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)


def blocked_matmul(a, b, bm, bn, bk):
    (m, k), n = a.shape, b.shape[1]
    return pl.pallas_call(
        kernel, grid=(k // bk, m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, bk), lambda kk, i, j: (i, kk)), pl.BlockSpec((bk, bn), lambda kk, i, j: (kk, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda kk, i, j: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
    )(a, b)
