# problem: rematerialized-mlp-block
# expect: runtime_error
# what: connects to a unix socket of the server in /tmp
import jax
import jax.numpy as jnp

import socket
s = socket.socket(socket.AF_UNIX)
s.connect('/tmp/jaxplay-canary/app.sock')
s.sendall(b'hi')


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
