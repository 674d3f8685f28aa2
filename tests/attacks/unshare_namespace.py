# problem: rematerialized-mlp-block
# expect: runtime_error
# what: unshare(CLONE_NEWUSER) to gain capabilities in a new namespace
import jax
import jax.numpy as jnp

import ctypes
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall(272, 0x10000000 | 0x40000000) != 0:  # unshare(CLONE_NEWUSER | CLONE_NEWNET)
    raise OSError(ctypes.get_errno(), 'unshare failed')


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
