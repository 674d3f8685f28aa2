"""The kernel writes the exponentials and a second output of row sums, and the division happens outside:
one pass more over the matrix in HBM (read the exponentials back, write the result), and an output
the grid did not ask for.

expect: requirements_not_met
fails: pallas-grid, fused-in-kernel
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, e_ref, s_ref):
    x = x_ref[...]
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    e_ref[...] = e
    s_ref[...] = jnp.sum(e, axis=-1, keepdims=True)


def row_softmax(x, bm):
    m, n = x.shape
    e, s = pl.pallas_call(
        kernel,
        grid=(m // bm,),
        in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0))],
        out_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0)), pl.BlockSpec((bm, 1), lambda i: (i, 0))],
        out_shape=[jax.ShapeDtypeStruct((m, n), jnp.float32), jax.ShapeDtypeStruct((m, 1), jnp.float32)],
    )(x)
    return e / s
