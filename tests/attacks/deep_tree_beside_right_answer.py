# problem: rematerialized-mlp-block
# expect: wrong_answer
# jobs: 2
# what: nests 1,500 folders in its scratch folder (mkdir d; chdir d) while another learner's right answer runs on the same fork server: removing it recursed once per level, raised RecursionError and took the fork server and the other run down
import jax
import jax.numpy as jnp

import os
for _ in range(1500):
    os.mkdir("d")
    os.chdir("d")


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
