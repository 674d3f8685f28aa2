# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: plants a symlink to the secret in its scratch folder and reads through it
import jax
import jax.numpy as jnp

import os
os.symlink('/tmp/jaxplay-canary/secret.txt', 'link.txt')
print(open('link.txt').read())


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
