"""The grid puts the contraction axis first, `(K // bk, M // bm, N // bn)`: a grid's last axis runs
innermost, so each output tile is left after one step and come back to at every later step of the
contraction. Generic interpret mode gives the right numbers; a TPU writes an output tile back to HBM when its
index changes and never reads it in again, so each return starts from stale data (on a v5e every entry
came out wrong). The grader's TPU interpret mode stops at the first return and names its grid steps.

expect: runtime_error
fails: pallas-grid, work-in-kernel, init-guarded, compiles-for-tpu-v5e
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
