# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: connects to the app's port on loopback and sends the environment
import jax
import jax.numpy as jnp

import os, socket
s = socket.create_connection(('127.0.0.1', 47471), timeout=3)
s.sendall(repr(dict(os.environ)).encode())


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
