# problem: rematerialized-mlp-block
# expect: runtime_error
# what: reads the grader process's environment through /proc
import jax
import jax.numpy as jnp

import os
for pid in (os.getppid(), 1):
    print(open(f'/proc/{pid}/environ', 'rb').read())


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
