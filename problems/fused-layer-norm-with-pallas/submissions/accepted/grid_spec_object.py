"""The grid and blocks as one `PrefetchScalarGridSpec` (no scalar operands), `gamma` and `beta` reshaped to
(1, N) outside the kernel (no data moves), and the statistics with `jnp.sum` divided by the width.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, g_ref, b_ref, o_ref):
    x = x_ref[...]
    n = x.shape[-1]
    mean = jnp.sum(x, axis=-1, keepdims=True) / n
    d = x - mean
    inv = jax.lax.rsqrt(jnp.sum(d * d, axis=-1, keepdims=True) / n + 1e-5)
    o_ref[...] = d * inv * g_ref[...] + b_ref[...]


def layer_norm(x, gamma, beta, bm):
    m, n = x.shape
    spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=0,
        grid=(m // bm,),
        in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0)), pl.BlockSpec((1, n), lambda i: (0, 0)),
                  pl.BlockSpec((1, n), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
    )
    return pl.pallas_call(kernel, grid_spec=spec, out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(
        x, gamma[None, :], beta[None, :])
