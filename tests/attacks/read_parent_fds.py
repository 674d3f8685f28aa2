# problem: rematerialized-mlp-block
# expect: runtime_error
# what: opens the grader process's file descriptors and cwd through /proc
import jax
import jax.numpy as jnp

import os
ppid = os.getppid()
print(os.listdir(f'/proc/{ppid}/fd'), os.readlink(f'/proc/{ppid}/cwd'))
print(open(f'/proc/{ppid}/cwd/.streamlit/secrets.toml').read())


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
