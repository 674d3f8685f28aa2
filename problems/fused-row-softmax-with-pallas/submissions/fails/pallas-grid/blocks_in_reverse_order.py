"""Step i takes the row blocks from the end, block `M // bm - 1 - i`, for the input and the output alike: every
block is read and written once and inside the array, so the numbers are right on a CPU and on a TPU, but the
grid is not the one asked for (step i at block (i, 0)), which the requirement states exactly.

expect: requirements_not_met
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
    last = m // bm - 1
    return pl.pallas_call(kernel, grid=(m // bm,), in_specs=[pl.BlockSpec((bm, n), lambda i: (last - i, 0))],
                          out_specs=pl.BlockSpec((bm, n), lambda i: (last - i, 0)),
                          out_shape=jax.ShapeDtypeStruct((m, n), x.dtype))(x)
