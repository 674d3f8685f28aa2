"""`jnp.square` for the variance, the scale and shift folded into one expression, the specs as a tuple with a
named, interpreted `pallas_call` (the grader ignores `interpret=`), and `gamma[None]` for the reshape.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

EPS = 1e-5


def _layernorm_fwd(x_ref, w_ref, b_ref, y_ref):
    x = x_ref[...]
    xc = x - x.mean(-1, keepdims=True)
    rstd = jax.lax.rsqrt(jnp.square(xc).mean(-1, keepdims=True) + EPS)
    y_ref[...] = (xc * rstd) * w_ref[...] + b_ref[...]


def layer_norm(x, gamma, beta, bm):
    M, N = x.shape
    return pl.pallas_call(
        _layernorm_fwd,
        out_shape=jax.ShapeDtypeStruct((M, N), x.dtype),
        grid=(M // bm,),
        in_specs=(pl.BlockSpec((bm, N), lambda i: (i, 0)),
                  pl.BlockSpec((1, N), lambda i: (0, 0)),
                  pl.BlockSpec((1, N), lambda i: (0, 0))),
        out_specs=pl.BlockSpec((bm, N), lambda i: (i, 0)),
        interpret=True,
        name="layernorm_fwd",
    )(x, gamma[None], beta[None])
