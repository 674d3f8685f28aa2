"""A complete softmax kernel whose output is added times zero to `jax.nn.softmax`'s: present in the program,
carrying nothing.

expect: requirements_not_met
fails: pallas-grid, fused-in-kernel
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
    k = pl.pallas_call(kernel, grid=(m // bm,), in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0))],
                       out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
                       out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(x)
    return jax.nn.softmax(x, axis=-1) + 0.0 * k
