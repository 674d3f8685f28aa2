# problem: rematerialized-mlp-block
# expect: runtime_error wrong_answer
# what: os.system and os.popen
import jax
import jax.numpy as jnp

import os
assert os.system('touch /tmp/pwned-system') == 0, 'os.system did not run'
print(os.popen('id').read())


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
