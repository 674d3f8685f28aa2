# problem: gradient-accumulation-with-scan
# expect: memory_limit
# says: shared memory is not available in the sandbox
# what: creates a System V shared memory segment, which would outlive the worker in a shared IPC namespace
import jax
import jax.numpy as jnp

import ctypes
libc = ctypes.CDLL(None, use_errno=True)
shmid = libc.shmget(0x6A617870, 1 << 20, 0o1666)  # IPC_CREAT | 0666
if shmid < 0:
    raise OSError(ctypes.get_errno(), "shmget refused")
print("segment", shmid)


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
