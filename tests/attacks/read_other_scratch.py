# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: looks for other learners' scratch folders in /tmp
import jax
import jax.numpy as jnp

import os
print(os.listdir('/tmp'))
for d in os.listdir('/tmp'):
    print(d, os.listdir('/tmp/' + d))


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
