"""`jax.nn.softmax` computed outside, and a kernel that only copies its result block by block: the right
grid, the right blocks, and three passes over the matrix in HBM before the kernel runs.

expect: requirements_not_met
fails: fused-in-kernel
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def copy_kernel(y_ref, o_ref):
    o_ref[...] = y_ref[...]


def row_softmax(x, bm):
    m, n = x.shape
    y = jax.nn.softmax(x, axis=-1)
    return pl.pallas_call(
        copy_kernel,
        grid=(m // bm,),
        in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
    )(y)
