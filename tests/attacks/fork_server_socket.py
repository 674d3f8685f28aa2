# problem: rematerialized-mlp-block
# expect: runtime_error
# what: hunts for the fork server's control socket among inherited file descriptors and asks it to fork
import jax
import jax.numpy as jnp

import os, socket
found = []
for fd in range(3, 1024):
    try:
        s = socket.socket(fileno=os.dup(fd))
    except OSError:
        continue
    try:
        s.send(b'{"fork": 1}')
        found.append(fd)
    except OSError:
        pass
if not found:
    raise RuntimeError("no control socket reachable")


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
