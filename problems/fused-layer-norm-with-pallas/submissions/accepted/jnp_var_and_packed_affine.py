"""`jnp.var` in the kernel, the scale and shift packed into one (2, N) operand (one `BlockSpec` for both), the
division by the square root spelled out, and the call under `jax.jit` with `bm` static.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, affine_ref, out_ref, *, eps):
    x = x_ref[...]
    mu = x.mean(axis=1, keepdims=True)
    var = jnp.var(x, axis=1, keepdims=True)
    affine = affine_ref[...]
    out_ref[...] = (x - mu) / jnp.sqrt(var + eps) * affine[0:1, :] + affine[1:2, :]


@functools.partial(jax.jit, static_argnums=3)
def layer_norm(x, gamma, beta, bm):
    m, n = x.shape
    affine = jnp.stack([gamma, beta])
    return pl.pallas_call(
        functools.partial(kernel, eps=1e-5),
        grid=(m // bm,),
        in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0)), pl.BlockSpec((2, n), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
    )(x, affine)
