# problem: gradient-accumulation-with-scan
# expect: memory_limit runtime_error
# what: writes into $HOME's parent, /var/tmp and /dev/shm
import jax
import jax.numpy as jnp

import os
for d in ('/dev/shm', '/var/tmp', '/root'):
    open(os.path.join(d, 'pwned.txt'), 'w').write('pwned')


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
