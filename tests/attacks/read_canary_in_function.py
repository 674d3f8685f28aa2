# problem: rematerialized-mlp-block
# expect: runtime_error
# what: reads a secret file while being traced
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    print(open('/tmp/jaxplay-canary/secret.txt').read())
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
