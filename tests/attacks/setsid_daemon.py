# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: double-forks a setsid daemon that outlives the run
import jax
import jax.numpy as jnp

import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3600)
    os._exit(0)


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
