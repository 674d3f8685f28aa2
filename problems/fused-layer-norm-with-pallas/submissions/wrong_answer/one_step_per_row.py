"""A grid of M steps, one per row, over blocks of `bm` rows: step i reads block i, and past M // bm the
block index is outside the array. Generic interpret mode clamps those blocks onto the last one and writes
the same values again, so its numbers are right; a TPU reads and writes outside the array there. The
grader's TPU interpret mode stops at the first such block and names the operand, the block and the step.

expect: runtime_error
fails: pallas-grid, fused-in-kernel, compiles-for-tpu-v5e
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, g_ref, b_ref, o_ref):
    x = x_ref[...]
    c = x - jnp.mean(x, axis=-1, keepdims=True)
    o_ref[...] = c * jax.lax.rsqrt(jnp.mean(c * c, axis=-1, keepdims=True) + 1e-5) * g_ref[...] + b_ref[...]


def layer_norm(x, gamma, beta, bm):
    m, n = x.shape
    vec = pl.BlockSpec((1, n), lambda i: (0, 0))
    return pl.pallas_call(kernel, grid=(m,), in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0)), vec, vec],
                          out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
                          out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(x, gamma.reshape(1, n), beta.reshape(1, n))
