"""The padding is zeroed with `jnp.where` before the call, and the kernel sums every block: `lengths` is
prefetched but nothing reads it, every block is copied, and the mask is one more pass over `x` in HBM.

expect: requirements_not_met
fails: pallas-grid, scalar-prefetch, skips-past-length
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(lens_ref, x_ref, o_ref):
    @pl.when(pl.program_id(1) == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    o_ref[...] += jnp.sum(x_ref[...], axis=1, keepdims=True)


def ragged_sum(x, lengths, bm, bn):
    m, n = x.shape
    keep = jnp.arange(n)[None, :] < jnp.repeat(lengths, bm)[:, None]
    masked = jnp.where(keep, x, 0.0)
    spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=(m // bm, n // bn),
                                        in_specs=[pl.BlockSpec((bm, bn), lambda i, j, lens: (i, j))],
                                        out_specs=pl.BlockSpec((bm, 1), lambda i, j, lens: (i, 0)))
    return pl.pallas_call(kernel, grid_spec=spec, out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32))(lengths, masked)
