# problem: rematerialized-mlp-block
# expect: runtime_error
# what: sends a UDP datagram to loopback
import jax
import jax.numpy as jnp

import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b'hello', ('127.0.0.1', 47472))


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
