"""Flax's `LayerNorm` statistics in the kernel: the mean and the mean of squares in one sweep, the variance as
their difference floored at 0 (`use_fast_variance`), `gamma` and `beta` as 1-D blocks of the whole vector.
Fewer sums than the two-pass form, and a few bits less exact on rows far from zero; inside the tolerance here.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

EPS = 1e-5


def _ln_kernel(x_ref, scale_ref, bias_ref, y_ref):
    x = x_ref[...]
    mean = jnp.mean(x, axis=-1, keepdims=True)
    mean2 = jnp.mean(lax.square(x), axis=-1, keepdims=True)
    var = jnp.maximum(0.0, mean2 - lax.square(mean))
    y = (x - mean) * lax.rsqrt(var + EPS)
    y_ref[...] = y * scale_ref[...] + bias_ref[...]


def layer_norm(x, gamma, beta, bm):
    m, n = x.shape
    vec = pl.BlockSpec((n,), lambda i: (0,))
    return pl.pallas_call(
        _ln_kernel,
        grid=(m // bm,),
        in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0)), vec, vec],
        out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
    )(x, gamma, beta)
