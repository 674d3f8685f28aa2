# problem: gradient-accumulation-with-scan
# expect: time_limit
# what: a lax.while_loop that never ends, inside compiled XLA code
import jax
import jax.numpy as jnp


def grad_accumulation(params, x, y, num_microbatches):
    x = jax.lax.while_loop(lambda c: c[0] >= 0, lambda c: (c[0] + 1, c[1] * 1.0001), (jnp.int32(0), x))[1]
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
