"""Step i takes the row blocks from the end, block `M // bm - 1 - i`, for `x` and the output alike: every block
is read and written once and inside the array, so the numbers are right on a CPU and on a TPU, but the grid
is not the one asked for (step i at block (i, 0)), which the requirement states exactly.

expect: requirements_not_met
fails: pallas-grid
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, g_ref, b_ref, o_ref):
    x = x_ref[...]
    mean = jnp.mean(x, axis=-1, keepdims=True)
    c = x - mean
    var = jnp.mean(c * c, axis=-1, keepdims=True)
    o_ref[...] = c * jax.lax.rsqrt(var + 1e-5) * g_ref[...] + b_ref[...]


def layer_norm(x, gamma, beta, bm):
    m, n = x.shape
    last = m // bm - 1
    rows = pl.BlockSpec((bm, n), lambda i: (last - i, 0))
    whole = pl.BlockSpec((1, n), lambda i: (0, 0))
    return pl.pallas_call(kernel, grid=(m // bm,), in_specs=[rows, whole, whole], out_specs=rows,
                          out_shape=jax.ShapeDtypeStruct((m, n), x.dtype))(x, gamma.reshape(1, n), beta.reshape(1, n))
