"""A `fori_loop` inside the kernel over the block's rows, each read and written with `pl.ds`: the same layer
norm one row at a time, on the block already in VMEM.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, g_ref, b_ref, o_ref):
    g, b = g_ref[...], b_ref[...]

    def one_row(r, carry):
        row = x_ref[pl.ds(r, 1), :]
        c = row - jnp.mean(row, axis=1, keepdims=True)
        o_ref[pl.ds(r, 1), :] = c * jax.lax.rsqrt(jnp.mean(c * c, axis=1, keepdims=True) + 1e-5) * g + b
        return carry

    jax.lax.fori_loop(0, x_ref.shape[0], one_row, 0)


def layer_norm(x, gamma, beta, bm):
    m, n = x.shape
    vec = pl.BlockSpec((1, n), lambda i: (0, 0))
    rows = pl.BlockSpec((bm, n), lambda i: (i, 0))
    return pl.pallas_call(kernel, grid=(m // bm,), in_specs=[rows, vec, vec], out_specs=rows,
                          out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(x, gamma.reshape(1, n), beta.reshape(1, n))
