"""`jax.nn.softmax` called on the block inside the kernel: JAX's own softmax (max, exp, sum, divide) traced
into the kernel, so the whole softmax still runs on the block in VMEM.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref):
    o_ref[...] = jax.nn.softmax(x_ref[...], axis=-1)


def row_softmax(x, bm):
    m, n = x.shape
    return pl.pallas_call(
        kernel,
        grid=(m // bm,),
        in_specs=[pl.BlockSpec(block_shape=(bm, n), index_map=lambda i: (i, 0))],
        out_specs=pl.BlockSpec(block_shape=(bm, n), index_map=lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct(x.shape, jnp.float32),
    )(x)
