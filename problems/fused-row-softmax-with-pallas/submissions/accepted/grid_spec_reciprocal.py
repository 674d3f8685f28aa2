"""The grid and blocks as one `PrefetchScalarGridSpec` (no scalar operands), `lax.reduce_max` spelled out,
the normalisation as a product with the sum's reciprocal, and the grid axis marked parallel.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _softmax_block(x_ref, y_ref):
    logits = x_ref[...].astype(jnp.float32)
    row_max = lax.reduce_max(logits, axes=(1,))[:, None]
    unnormalized = jnp.exp(logits - row_max)
    denom = unnormalized.sum(axis=1, keepdims=True)
    y_ref[...] = (unnormalized * (1.0 / denom)).astype(y_ref.dtype)


@functools.partial(jax.jit, static_argnames=("bm",))
def row_softmax(x, bm):
    rows, cols = x.shape
    block = pl.BlockSpec((bm, cols), lambda r: (r, 0))
    grid_spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=0, grid=(rows // bm,), in_specs=[block],
                                             out_specs=block)
    return pl.pallas_call(
        _softmax_block,
        grid_spec=grid_spec,
        out_shape=jax.ShapeDtypeStruct((rows, cols), x.dtype),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
    )(x)
