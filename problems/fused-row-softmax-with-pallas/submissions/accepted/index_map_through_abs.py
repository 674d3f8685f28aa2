"""The index maps written through `jnp.abs` and `jnp.maximum` (both the identity on a grid index): an unusual
spelling of block `(i, 0)`, which the grader runs at every grid step rather than reads, so it counts as
written.

expect: accepted
fails: none
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
    rows = pl.BlockSpec((bm, n), lambda i: (jnp.maximum(jnp.abs(i), 0), jnp.abs(i) * 0))
    return pl.pallas_call(kernel, grid=(m // bm,), in_specs=[rows], out_specs=rows,
                          out_shape=jax.ShapeDtypeStruct((m, n), x.dtype))(x)
