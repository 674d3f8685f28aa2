# problem: gradient-accumulation-with-scan
# expect: time_limit
# what: an endless busy loop inside the function
import jax
import jax.numpy as jnp


def grad_accumulation(params, x, y, num_microbatches):
    while True:
        pass
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
