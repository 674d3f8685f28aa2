# problem: rematerialized-mlp-block
# expect: runtime_error
# what: starts a multiprocessing pool
import jax
import jax.numpy as jnp

import multiprocessing as mp
with mp.Pool(2) as p:
    print(p.map(abs, [-1, -2]))


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
