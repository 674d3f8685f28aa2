# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: kill(-1, SIGKILL): every process it may signal
import jax
import jax.numpy as jnp

import os, signal
os.kill(-1, signal.SIGKILL)


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
