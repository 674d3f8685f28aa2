"""The softmax is fused in the kernel, then clipped to [0, 1] outside it "to be safe": harmless to the
numbers, and one more full pass over the matrix in HBM (read it back, write it again).

expect: requirements_not_met
fails: fused-in-kernel
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
    y = pl.pallas_call(kernel, grid=(m // bm,), in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0))],
                       out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
                       out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(x)
    return jnp.clip(y, 0.0, 1.0)
