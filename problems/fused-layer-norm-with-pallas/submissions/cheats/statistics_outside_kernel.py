"""The mean and variance taken with `jnp` outside and handed in as operands; the kernel only normalises,
scales and shifts: two more passes over the matrix in HBM.

expect: requirements_not_met
fails: pallas-grid, fused-in-kernel
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, mean_ref, var_ref, g_ref, b_ref, o_ref):
    o_ref[...] = (x_ref[...] - mean_ref[...]) * jax.lax.rsqrt(var_ref[...] + 1e-5) * g_ref[...] + b_ref[...]


def layer_norm(x, gamma, beta, bm):
    m, n = x.shape
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    rows, col, vec = (pl.BlockSpec((bm, n), lambda i: (i, 0)), pl.BlockSpec((bm, 1), lambda i: (i, 0)),
                      pl.BlockSpec((1, n), lambda i: (0, 0)))
    return pl.pallas_call(kernel, grid=(m // bm,), in_specs=[rows, col, col, vec, vec], out_specs=rows,
                          out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(
        x, mean, var, gamma.reshape(1, n), beta.reshape(1, n))
