"""The accumulator is reset with `jnp.where(program_id == 0, 0, acc)` at every step instead of under
`pl.when`: the same numbers, but every step reads the accumulator and selects, where `pl.when` skips the
write entirely after the first step.

expect: requirements_not_met
fails: init-guarded
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(a_ref, b_ref, o_ref):
    first = pl.program_id(2) == 0
    acc = jnp.where(first, jnp.zeros_like(o_ref[...]), o_ref[...])
    o_ref[...] = acc + jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)


def blocked_matmul(a, b, bm, bn, bk):
    (m, k), n = a.shape, b.shape[1]
    return pl.pallas_call(
        kernel, grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
    )(a, b)
