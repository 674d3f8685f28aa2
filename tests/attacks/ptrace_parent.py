# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: PTRACE_ATTACH to its parent
import jax
import jax.numpy as jnp

import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(16, os.getppid(), 0, 0) != 0:
    raise OSError(ctypes.get_errno(), 'ptrace failed')


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
