# problem: rematerialized-mlp-block
# expect: runtime_error
# what: creates a socket with a raw system call and connects to loopback
import jax
import jax.numpy as jnp

import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(41, 2, 1, 0)  # socket(AF_INET, SOCK_STREAM)
if fd < 0:
    raise OSError(ctypes.get_errno(), 'socket failed')
addr = struct.pack('!HH4s8x', 2, 47471, bytes([127, 0, 0, 1]))
addr = struct.pack('<H', 2) + addr[2:]
if libc.connect(fd, addr, len(addr)) != 0:
    raise OSError(ctypes.get_errno(), 'connect failed')


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
