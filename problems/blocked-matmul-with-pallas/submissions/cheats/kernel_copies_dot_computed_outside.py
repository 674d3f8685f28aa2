"""`jnp.dot` computes the product outside; the kernel only copies it block by block: a pallas_call with the
right grid, doing none of the work.

expect: requirements_not_met
fails: pallas-grid, work-in-kernel, init-guarded
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(c_ref, o_ref):
    o_ref[...] = c_ref[...]


def blocked_matmul(a, b, bm, bn, bk):
    (m, k), n = a.shape, b.shape[1]
    c = jnp.dot(a, b, preferred_element_type=jnp.float32)
    return pl.pallas_call(
        kernel, grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
    )(c)
