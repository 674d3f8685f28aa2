# problem: gradient-accumulation-with-scan
# expect: memory_limit runtime_error
# what: memfd_create and memfd_secret by raw system call number (no Python wrapper to refuse), then 2.4 GiB
import jax
import jax.numpy as jnp

import ctypes
import os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
fds = [libc.syscall(319, b"hoard", 0), libc.syscall(447, 0)]  # memfd_create, memfd_secret
print("fds", fds)
fd = max(fds)
if fd < 0:
    raise OSError(ctypes.get_errno(), "memfd refused")
chunk = b"x" * (64 << 20)
for _ in range(39):
    os.write(fd, chunk)


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
