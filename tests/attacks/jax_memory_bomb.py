# problem: gradient-accumulation-with-scan
# expect: memory_limit runtime_error
# what: asks XLA for a 16 GiB output array
import jax
import jax.numpy as jnp


def grad_accumulation(params, x, y, num_microbatches):
    return {'loss': jnp.ones((1 << 32,), jnp.float32) * x.sum(), 'grads': params}
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
