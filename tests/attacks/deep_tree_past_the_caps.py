# problem: rematerialized-mlp-block
# expect: output_limit wrong_answer
# jobs: 2
# what: nests folders as fast as it can (tens of thousands of levels, far past PATH_MAX) while a right answer runs beside it, to make its removal outlast the grader's patience or overflow a recursion
import jax
import jax.numpy as jnp

import os
for _ in range(40_000):
    try:
        os.mkdir("d")
        os.chdir("d")
    except OSError:
        break


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
