# problem: rematerialized-mlp-block
# expect: runtime_error memory_limit
# what: lifts the recursion limit and overflows the C stack
import jax
import jax.numpy as jnp

import sys
sys.setrecursionlimit(10 ** 9)
def down(n):
    return down(n + 1) + 1
down(0)


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
