# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: walks /proc reading every process's environment and command line
import jax
import jax.numpy as jnp

import os
for entry in os.listdir('/proc'):
    if entry.isdigit():
        for name in ('environ', 'cmdline'):
            try:
                print(open(f'/proc/{entry}/{name}', 'rb').read())
            except OSError:
                pass


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
