# problem: rematerialized-mlp-block
# expect: runtime_error
# what: raises its own resource limits back up
import jax
import jax.numpy as jnp

import resource
resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
