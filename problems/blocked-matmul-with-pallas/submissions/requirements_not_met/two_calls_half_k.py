"""Two pallas_calls, each over half of the contraction, added outside the kernels: right numbers, but the
partial sums make a round trip through HBM that one kernel over the whole contraction axis avoids.

Its blocks are `min(bk, k)` wide: at the cases' sizes a whole half of the contraction, at the realistic size
`bk`, so the kernel compiled for the TPU is not the one graded, and the compile row fails too.

expect: requirements_not_met
fails: pallas-grid, compiles-for-tpu-v5e
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(a_ref, b_ref, o_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    o_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)


def half(a, b, bm, bn, bk):
    (m, k), n = a.shape, b.shape[1]
    return pl.pallas_call(
        kernel, grid=(m // bm, n // bn, max(1, k // bk)),
        in_specs=[pl.BlockSpec((bm, min(bk, k)), lambda i, j, kk: (i, kk)),
                  pl.BlockSpec((min(bk, k), bn), lambda i, j, kk: (kk, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
    )(a, b)


def blocked_matmul(a, b, bm, bn, bk):
    h = a.shape[1] // 2
    return half(a[:, :h], b[:h], bm, bn, bk) + half(a[:, h:], b[h:], bm, bn, bk)
