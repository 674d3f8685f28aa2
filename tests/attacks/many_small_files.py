# problem: rematerialized-mlp-block
# expect: output_limit wrong_answer runtime_error
# what: creates 100 000 small files
import jax
import jax.numpy as jnp

import os
os.mkdir('many')
for i in range(100_000):
    open(f'many/{i}', 'w').write('x')


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
