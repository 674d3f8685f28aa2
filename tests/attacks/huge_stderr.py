# problem: rematerialized-mlp-block
# expect: output_limit
# what: writes to stderr without end, from inside the function
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    import sys
    while True:
        sys.stderr.write('spam ' * 200 + '\n')
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
