# problem: rematerialized-mlp-block
# expect: runtime_error
# what: kills its parent, PID 1 and its own process group
import jax
import jax.numpy as jnp

import os, signal
for pid in (os.getppid(), 1):
    os.kill(pid, signal.SIGKILL)
os.killpg(0, signal.SIGKILL)


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
