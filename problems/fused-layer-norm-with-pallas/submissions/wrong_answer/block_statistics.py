"""The mean and variance of the whole block (every row of the step together) instead of each row's: right
only when the block's rows share their statistics.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, g_ref, b_ref, o_ref):
    x = x_ref[...]
    c = x - jnp.mean(x)
    o_ref[...] = c * jax.lax.rsqrt(jnp.mean(c * c) + 1e-5) * g_ref[...] + b_ref[...]


def layer_norm(x, gamma, beta, bm):
    m, n = x.shape
    vec = pl.BlockSpec((1, n), lambda i: (0, 0))
    return pl.pallas_call(kernel, grid=(m // bm,), in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0)), vec, vec],
                          out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
                          out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(x, gamma.reshape(1, n), beta.reshape(1, n))
