# problem: rematerialized-mlp-block
# expect: runtime_error
# what: pidfd_open on its parent to signal it
import jax
import jax.numpy as jnp

import os, signal
fd = os.pidfd_open(os.getppid())
signal.pidfd_send_signal(fd, signal.SIGKILL)


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
