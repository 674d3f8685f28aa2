"""All of `x` handed to every step (a block the size of the whole array), each step normalising its own rows
from it with `pl.ds`: right in interpret mode, but at M = 4096, N = 2048 that block is 32 MiB, double-buffered,
far past a v5e's 16 MiB of scoped VMEM, and Mosaic refuses it. The grid row refuses it too: x's block must be
the step's rows.

expect: requirements_not_met
fails: pallas-grid, compiles-for-tpu-v5e
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def layer_norm(x, gamma, beta, bm):
    m, n = x.shape

    def kernel(x_ref, g_ref, b_ref, o_ref):
        x = x_ref[pl.ds(pl.multiple_of(pl.program_id(0) * bm, bm), bm), :]
        c = x - jnp.mean(x, axis=-1, keepdims=True)
        o_ref[...] = c * jax.lax.rsqrt(jnp.mean(c * c, axis=-1, keepdims=True) + 1e-5) * g_ref[...] + b_ref[...]

    vec = pl.BlockSpec((1, n), lambda i: (0, 0))
    return pl.pallas_call(kernel, grid=(m // bm,), in_specs=[pl.BlockSpec((m, n), lambda i: (0, 0)), vec, vec],
                          out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
                          out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(x, gamma.reshape(1, n), beta.reshape(1, n))
