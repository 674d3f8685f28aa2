"""The sample variance (`ddof=1`, dividing by N - 1) instead of the population variance: every row's
spread comes out a few per cent too small.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, g_ref, b_ref, o_ref):
    x = x_ref[...]
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True, ddof=1)
    o_ref[...] = (x - mu) * jax.lax.rsqrt(var + 1e-5) * g_ref[...] + b_ref[...]


def layer_norm(x, gamma, beta, bm):
    m, n = x.shape
    vec = pl.BlockSpec((1, n), lambda i: (0, 0))
    return pl.pallas_call(kernel, grid=(m // bm,), in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0)), vec, vec],
                          out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
                          out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(x, gamma.reshape(1, n), beta.reshape(1, n))
