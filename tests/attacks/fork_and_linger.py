# problem: rematerialized-mlp-block
# expect: runtime_error
# what: forks a child that sleeps for an hour
import jax
import jax.numpy as jnp

import os, time
if os.fork() == 0:
    time.sleep(3600)
    os._exit(0)


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
