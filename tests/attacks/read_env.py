# problem: gradient-accumulation-with-scan
# expect: wrong_answer
# what: prints every environment variable it can see (the server's secrets must not be among them)
import jax
import jax.numpy as jnp

import os
print(dict(os.environ))


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
