# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: runs a shell command that writes a file and opens a connection
import jax
import jax.numpy as jnp

import subprocess
subprocess.run(['sh', '-c', 'touch /tmp/pwned-shell; id'], check=True)


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
