"""The kernel exponentiates and divides, but the row maxima and sums are taken with `jnp` outside and passed
in as operands: two more passes over the matrix in HBM, and a second `BlockSpec` the grid did not ask for.

expect: requirements_not_met
fails: pallas-grid, fused-in-kernel
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, m_ref, s_ref, o_ref):
    o_ref[...] = jnp.exp(x_ref[...] - m_ref[...]) / s_ref[...]


def row_softmax(x, bm):
    m, n = x.shape
    row_max = jnp.max(x, axis=-1, keepdims=True)
    row_sum = jnp.sum(jnp.exp(x - row_max), axis=-1, keepdims=True)
    col = pl.BlockSpec((bm, 1), lambda i: (i, 0))
    return pl.pallas_call(kernel, grid=(m // bm,),
                          in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0)), col, col],
                          out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
                          out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(x, row_max, row_sum)
