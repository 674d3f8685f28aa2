# problem: rematerialized-mlp-block
# expect: runtime_error
# what: hard-links the secret into its scratch folder
import jax
import jax.numpy as jnp

import os
os.link('/tmp/jaxplay-canary/secret.txt', 'copy.txt')
print(open('copy.txt').read())


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
