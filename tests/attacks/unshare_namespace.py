# problem: rematerialized-mlp-block
# expect: runtime_error
# what: unshare(CLONE_NEWUSER) to gain capabilities in a new namespace
import jax
import jax.numpy as jnp

import os
os.unshare(os.CLONE_NEWUSER | os.CLONE_NEWNET)


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
