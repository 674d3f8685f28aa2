"""The row block written as `jnp.abs(i - 1) + 1`: block 2 at step 0, one past the end of a two-block array, and
block 1 at step 1. Generic interpret mode clamps block 2 onto block 1 and the output's block 0 is never
written, so only some cases fail there; on a TPU v5e such an index map halted the core. The grader's TPU
interpret mode stops at the block outside the array and names it.

expect: runtime_error
fails: pallas-grid, fused-in-kernel, compiles-for-tpu-v5e
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
    rows = pl.BlockSpec((bm, n), lambda i: (jnp.abs(i - 1) + 1, 0))
    return pl.pallas_call(kernel, grid=(m // bm,), in_specs=[rows], out_specs=rows,
                          out_shape=jax.ShapeDtypeStruct((m, n), x.dtype))(x)
