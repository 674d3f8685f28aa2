# problem: gradient-accumulation-with-scan
# expect: wrong_answer
# what: returns NaN everywhere
import jax
import jax.numpy as jnp


def grad_accumulation(params, x, y, num_microbatches):
    return {'loss': jnp.float32(jnp.nan), 'grads': jax.tree.map(lambda p: p * jnp.nan, params)}
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
