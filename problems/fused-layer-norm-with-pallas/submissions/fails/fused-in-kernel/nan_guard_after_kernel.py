"""The layer norm is fused in the kernel, then every value is checked with `jnp.isfinite` outside it and
NaNs replaced by 0 "to be safe": harmless to these numbers, and one more full pass over the matrix in HBM.

expect: requirements_not_met
fails: fused-in-kernel
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
    y = pl.pallas_call(kernel, grid=(m // bm,), in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0)), vec, vec],
                       out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
                       out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(x, gamma.reshape(1, n), beta.reshape(1, n))
    return jnp.where(jnp.isfinite(y), y, 0.0)
