"""Each step writes its centred rows into a VMEM scratch buffer the size of the whole matrix, at the block's
rows (`pl.ds`), and normalises from there: right in interpret mode, but at M = 4096, N = 2048
that buffer alone is 32 MiB, twice a v5e's 16 MiB of scoped VMEM, and Mosaic refuses it. The block is
all a step needs.

expect: requirements_not_met
fails: compiles-for-tpu-v5e
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def layer_norm(x, gamma, beta, bm):
    m, n = x.shape

    def kernel(x_ref, g_ref, b_ref, o_ref, stage_ref):
        rows = pl.ds(pl.multiple_of(pl.program_id(0) * bm, bm), bm)
        x = x_ref[...]
        stage_ref[rows, :] = x - jnp.mean(x, axis=-1, keepdims=True)
        c = stage_ref[rows, :]
        o_ref[...] = c * jax.lax.rsqrt(jnp.mean(c * c, axis=-1, keepdims=True) + 1e-5) * g_ref[...] + b_ref[...]

    vec = pl.BlockSpec((1, n), lambda i: (0, 0))
    return pl.pallas_call(kernel, grid=(m // bm,), in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0)), vec, vec],
                          out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
                          out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
                          scratch_shapes=[pltpu.VMEM((m, n), jnp.float32)])(x, gamma.reshape(1, n), beta.reshape(1, n))
