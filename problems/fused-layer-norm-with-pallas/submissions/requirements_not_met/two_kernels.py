"""Two kernels: the first writes each row's mean and inverse standard deviation, the second reads `x` again
to normalise, scale and shift. The numbers are right; the matrix is read from HBM twice.

expect: requirements_not_met
fails: pallas-grid, fused-in-kernel
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def stats_kernel(x_ref, mu_ref, inv_ref):
    x = x_ref[...]
    mu = jnp.mean(x, axis=-1, keepdims=True)
    c = x - mu
    mu_ref[...] = mu
    inv_ref[...] = jax.lax.rsqrt(jnp.mean(c * c, axis=-1, keepdims=True) + 1e-5)


def apply_kernel(x_ref, mu_ref, inv_ref, g_ref, b_ref, o_ref):
    o_ref[...] = (x_ref[...] - mu_ref[...]) * inv_ref[...] * g_ref[...] + b_ref[...]


def layer_norm(x, gamma, beta, bm):
    m, n = x.shape
    rows, col, vec = (pl.BlockSpec((bm, n), lambda i: (i, 0)), pl.BlockSpec((bm, 1), lambda i: (i, 0)),
                      pl.BlockSpec((1, n), lambda i: (0, 0)))
    stat = jax.ShapeDtypeStruct((m, 1), jnp.float32)
    mu, inv = pl.pallas_call(stats_kernel, grid=(m // bm,), in_specs=[rows], out_specs=[col, col],
                             out_shape=[stat, stat])(x)
    return pl.pallas_call(apply_kernel, grid=(m // bm,), in_specs=[rows, col, col, vec, vec], out_specs=rows,
                          out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(
        x, mu, inv, gamma.reshape(1, n), beta.reshape(1, n))
