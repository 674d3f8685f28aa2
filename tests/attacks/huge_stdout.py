# problem: gradient-accumulation-with-scan
# expect: output_limit
# what: prints without end
import jax
import jax.numpy as jnp

while True:
    print('spam ' * 200)


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
