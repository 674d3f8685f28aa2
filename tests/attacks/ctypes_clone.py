# problem: rematerialized-mlp-block
# expect: runtime_error
# what: a raw clone system call without CLONE_THREAD
import jax
import jax.numpy as jnp

import ctypes, signal
libc = ctypes.CDLL(None, use_errno=True)
pid = libc.syscall(56, signal.SIGCHLD, 0, 0, 0, 0)
if pid == 0:
    libc.syscall(60, 0)  # the child exits at once, leaving a zombie if nobody reaps it
if pid < 0:
    raise OSError(ctypes.get_errno(), 'clone failed')


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
