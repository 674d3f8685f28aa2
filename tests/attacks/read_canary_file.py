# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: reads a secret file of the server at import time
import jax
import jax.numpy as jnp

print(open('/tmp/jaxplay-canary/secret.txt').read())


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
