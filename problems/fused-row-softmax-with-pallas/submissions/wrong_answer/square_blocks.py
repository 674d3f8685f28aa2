"""Square (bm, bm) blocks over a 2-D grid: each block normalises its part of a row by that part's own sum,
so no row sums to 1 (unless the row fits in one block); the grid is not the one asked for either.

expect: wrong_answer
fails: pallas-grid
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref):
    x = x_ref[...]
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    o_ref[...] = e / jnp.sum(e, axis=-1, keepdims=True)


def row_softmax(x, bm):
    m, n = x.shape
    spec = pl.BlockSpec((bm, bm), lambda i, j: (i, j))
    return pl.pallas_call(kernel, grid=(m // bm, pl.cdiv(n, bm)), in_specs=[spec], out_specs=spec,
                          out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(x)
