"""The kernel normalises, and the scale and shift are applied with `jnp` outside it: one more pass over the
matrix in HBM, and `gamma` and `beta` never enter the kernel.

expect: requirements_not_met
fails: pallas-grid, fused-in-kernel
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref):
    x = x_ref[...]
    mean = jnp.mean(x, axis=-1, keepdims=True)
    c = x - mean
    o_ref[...] = c * jax.lax.rsqrt(jnp.mean(c * c, axis=-1, keepdims=True) + 1e-5)


def layer_norm(x, gamma, beta, bm):
    m, n = x.shape
    y = pl.pallas_call(kernel, grid=(m // bm,), in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0))],
                       out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
                       out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(x)
    return y * gamma + beta
