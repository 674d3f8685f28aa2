"""One block the size of the whole array, `bm` ignored: a grid of one step. Right in interpret mode on a
CPU, but at the realistic size the block is 32 MiB of float32 (and the output's as much, each
double-buffered), far past a v5e's 16 MiB of scoped VMEM, and Mosaic refuses it.

expect: requirements_not_met
fails: pallas-grid, compiles-for-tpu-v5e
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref):
    x = x_ref[...]
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    o_ref[...] = e / jnp.sum(e, axis=-1, keepdims=True)


def row_softmax(x, bm):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, jnp.float32))(x)
