r"""eps added after the square root, $(x - \mu) / (\sqrt{\sigma^2} + \epsilon)$: the same on wide rows, tens of
per cent off on rows whose variance is near eps.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, g_ref, b_ref, o_ref):
    x = x_ref[...]
    c = x - jnp.mean(x, axis=-1, keepdims=True)
    o_ref[...] = c / (jnp.sqrt(jnp.mean(c * c, axis=-1, keepdims=True)) + 1e-5) * g_ref[...] + b_ref[...]


def layer_norm(x, gamma, beta, bm):
    m, n = x.shape
    vec = pl.BlockSpec((1, n), lambda i: (0, 0))
    return pl.pallas_call(kernel, grid=(m // bm,), in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0)), vec, vec],
                          out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),
                          out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(x, gamma.reshape(1, n), beta.reshape(1, n))
