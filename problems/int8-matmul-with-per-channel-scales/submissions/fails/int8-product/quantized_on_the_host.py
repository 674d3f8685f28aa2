"""`x` is quantized in NumPy through `jax.pure_callback` (which hands back the int8 values and the row
scales); the int8 product and the scaling run in JAX. Right numbers, but part of the answer is computed
outside the traced program.

expect: requirements_not_met
fails: int8-product
"""
import jax
import jax.numpy as jnp
import numpy as np


def _q(x):
    amax = np.max(np.abs(x), axis=1, keepdims=True)
    s = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    return np.clip(np.round(x / s), -127, 127).astype(np.int8), s


def int8_matmul(x, w_q, w_scale):
    m = x.shape[0]
    x_q, x_scale = jax.pure_callback(_q, (jax.ShapeDtypeStruct(x.shape, jnp.int8), jax.ShapeDtypeStruct((m, 1), jnp.float32)), x)
    acc = jax.lax.dot_general(x_q, w_q, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return acc.astype(jnp.float32) * x_scale * w_scale[None, :]
