# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: connects to an abstract unix socket of the server
import jax
import jax.numpy as jnp

import socket
s = socket.socket(socket.AF_UNIX)
s.connect(b'\0jaxplay-canary')
s.sendall(b'hi')


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
