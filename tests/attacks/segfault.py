# problem: rematerialized-mlp-block
# expect: runtime_error
# what: dereferences a null pointer with ctypes
import jax
import jax.numpy as jnp

import ctypes
ctypes.string_at(0)


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
