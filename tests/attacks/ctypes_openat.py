# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: opens the secret with a raw openat system call through ctypes
import jax
import jax.numpy as jnp

import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(257, -100, b'/tmp/jaxplay-canary/secret.txt', os.O_RDONLY, 0)
if fd < 0:
    raise OSError(ctypes.get_errno(), 'openat failed')
print(os.read(fd, 200))


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
