# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: opens files until it runs out of descriptors
import jax
import jax.numpy as jnp

files = []
while True:
    files.append(open('/dev/null'))


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
