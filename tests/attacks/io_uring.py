# problem: rematerialized-mlp-block
# expect: runtime_error
# what: io_uring_setup, which could bypass a system call filter
import jax
import jax.numpy as jnp

import ctypes
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
if libc.syscall(425, 8, params) < 0:
    raise OSError(ctypes.get_errno(), 'io_uring_setup failed')


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
