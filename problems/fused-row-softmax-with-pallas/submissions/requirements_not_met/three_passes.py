"""Three kernels, one per pass: the row maxima, then the exponentials and their sums, then the division.
Each kernel is fine on its own, and the numbers are right, but each reads the matrix from HBM again: the
unfused softmax the problem asks you to fuse.

expect: requirements_not_met
fails: pallas-grid, fused-in-kernel
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def max_kernel(x_ref, m_ref):
    m_ref[...] = jnp.max(x_ref[...], axis=-1, keepdims=True)


def exp_kernel(x_ref, m_ref, e_ref, s_ref):
    e = jnp.exp(x_ref[...] - m_ref[...])
    e_ref[...] = e
    s_ref[...] = jnp.sum(e, axis=-1, keepdims=True)


def div_kernel(e_ref, s_ref, o_ref):
    o_ref[...] = e_ref[...] / s_ref[...]


def row_softmax(x, bm):
    m, n = x.shape
    rows = pl.BlockSpec((bm, n), lambda i: (i, 0))
    col = pl.BlockSpec((bm, 1), lambda i: (i, 0))
    grid = (m // bm,)
    mx = pl.pallas_call(max_kernel, grid=grid, in_specs=[rows], out_specs=col,
                        out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32))(x)
    e, s = pl.pallas_call(exp_kernel, grid=grid, in_specs=[rows, col], out_specs=[rows, col],
                          out_shape=[jax.ShapeDtypeStruct((m, n), jnp.float32),
                                     jax.ShapeDtypeStruct((m, 1), jnp.float32)])(x, mx)
    return pl.pallas_call(div_kernel, grid=grid, in_specs=[rows, col], out_specs=rows,
                          out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(e, s)
